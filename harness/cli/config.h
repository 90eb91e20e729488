/*
 * config — the flags a team retypes on every command (endpoint, model,
 * tokenizer, template, ...) read from a JSON file, so `needle run smoke`
 * needs no more. The file is the first of: `--config FILE` (any command,
 * before a "--"), $NEEDLE_CONFIG (both named: the file must exist),
 * ./needle.json, $XDG_CONFIG_HOME/needle/config.json, else (no
 * XDG_CONFIG_HOME) ~/.config/needle/config.json (those three are found, not
 * named). It is one JSON object (parsed by cJSON):
 *
 *	{"tokenizer": "deepseek-ai/DeepSeek-V3", "template": "deepseek-v3",
 *	 "run": {"concurrency": 8}}
 *
 * A top-level key is a long option name (without "--") and applies to every
 * command that has that option; an object under a command's name ("run",
 * "count", "gen haystack", ...) applies to that command only and wins over
 * the top level. A value is a string, a number, true (a flag; false leaves
 * it off) or, for a repeatable option, an array of strings. A key that is
 * no command's option is refused naming the key and the file ("did you
 * mean"); one that is another command's option is left to it.
 *
 * A file found, not named, may not choose where requests go nor which
 * secret or trust they carry: `base-url`, `endpoints`, `api-key-env`,
 * `cacert`, `insecure` anywhere in it refuse the file (a checked-out
 * repository's needle.json would otherwise send a CI secret to its own
 * host). Naming it (--config, NEEDLE_CONFIG) is the opt-in (docs/security.md).
 *
 * A file in use says so on standard error ("needle: using config FILE
 * (keys: ...)", the options it set for this command) and config_used()
 * hands the same to the manifest. A value the command refuses later (an
 * option's "option '--NAME' ..." message) is reported against the file and
 * the key (config_blame).
 *
 * Precedence: the command line, then the file, then the environment
 * variables options fall back to (OPENAI_BASE_URL, ...), then the defaults.
 * An option given on the command line takes nothing from the file (a
 * repeatable one included: the file's --base-url list is not added to).
 */
#ifndef NEEDLE_CONFIG_H
#define NEEDLE_CONFIG_H

#include "base/err.h"
#include "base/io.h"
#include "cli.h"
#include "run/record.h"

/* The file in use and what it set (static storage, valid until exit). */
struct config_used {
	const char *path;            /* as named or found */
	int named;                   /* 1: --config or NEEDLE_CONFIG */
	char sha256[IO_SHA256_HEX];  /* of its bytes */
	const char *keys[CLI_OPTS_MAX]; /* the options it set for this command */
	int nkeys;
};

/* Takes `--config FILE` out of argv, then replaces *argc, *argv with the
 * file's options for `cmd` not given in argv, followed by argv itself
 * (static storage, valid until exit; the file's values are kept as long).
 * Leaves them alone without a file. The file is found and read once
 * (config_load_text), at the first call.
 * ERR_INPUT naming the file (unreadable, not JSON, an unknown key, a key a
 * found file may not set, a value of the wrong kind), ERR_USAGE past
 * CLI_ARGS_MAX arguments or for `--config` without a value, ERR_NOMEM,
 * ERR_LOADER (no libcrypto for its SHA-256). */
enum err config_args(const struct cli_cmd *cmd, int *argc, char ***argv, struct diag *d);

/* Makes the `len` bytes at `text` the file in use, as read from `path`
 * (named: --config or NEEDLE_CONFIG), replacing any before: parsed and every
 * key checked (config.h). ERR_INPUT naming the file and the key, ERR_NOMEM,
 * ERR_LOADER. Then no file is in use. */
enum err config_load_text(const char *path, int named, const char *text, size_t len,
			  struct diag *d);

/* Prints "needle: using config FILE (keys: ...)" to stderr when a file is
 * in use. */
void config_say(void);

/* The file in use, or NULL. */
const struct config_used *config_used(void);

/* The path of the file when option `name` (without "--") took its value
 * from it, else NULL. */
const char *config_blame(const char *name, size_t len);

/* Where a command's settings came from, into *g (config.h, run/record.h):
 * the file in use, and for a --tokenizer `tokenizer` with a model id's shape
 * which of the two it is (tpl_hub_from, given the cache folder `hub_path`
 * tpl_hub_resolve found, or NULL), said on stderr: "needle: tokenizer
 * ORG/NAME: the local folder ORG/NAME" (a folder of the current one shadows
 * the cache) or "...: the hugging face cache SNAPSHOT". */
void config_origin(struct record_origin *g, const char *tokenizer, const char *hub_path);

#endif
