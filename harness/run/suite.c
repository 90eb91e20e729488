/*
 * suite — see suite.h. Validation walks the file once: every value is checked
 * where it is written (so an error in "defaults" names defaults.KEY), then the
 * merged case is checked as a whole (kind-specific required fields).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "expect.h"
#include "base/hint.h"
#include "base/io.h"
#include "base/jcheck.h"
#include "base/jget.h"
#include "base/json.h"
#include "base/mem.h"
#include "base/utf8.h"
#include "recprobe.h"
#include "schema.h"
#include "suite.h"

static const char *const case_keys[] = {
	"id", "kind", "description", "messages", "prompt", "tools",
	"tool_choice", "temperature", "top_p", "max_tokens", "seed",
	"ignore_eos", "min_tokens", "repeat", "chat_template_kwargs",
	"reasoning_effort", "recall", "usage_tolerance", "expect", "load",
	"during", "request", "parity", NULL};
/* Members of a request body that needle writes itself, or that a case sets
 * by its own field: "request" may not hold them. */
static const char *const request_owned[] = {"model", "messages", "prompt", "stream",
					    "stream_options", NULL};
static const char *const top_keys[] = {"suite", "description", "defaults",
				       "cases", NULL};
static const char *const recall_keys[] = {"tokens", "depths", "seeds",
					  "needles", "filler", "distractors",
					  "jitter", "cache", NULL};
static const char *const kind_names[] = {"chat", "recall", "tool_call",
					 "multi_turn", "image_order", "load", NULL};
static const char *const fillers[] = {"prose", "code", "zh", "mixed", NULL};
static const char *const roles[] = {"system", "developer", "user",
				    "assistant", "tool", NULL};

const char *suite_kind_name(enum suite_kind k)
{
	return (unsigned)k <= SUITE_LOAD ? kind_names[k] : "?";
}

/* Whether the first `n` bytes are those of a PNG, JPEG, GIF or WebP file. */
static int image_magic(const unsigned char *b, size_t n)
{
	return (n >= 8 && !memcmp(b, "\x89PNG\r\n\x1a\n", 8)) ||
	       (n >= 3 && !memcmp(b, "\xff\xd8\xff", 3)) ||
	       (n >= 6 && (!memcmp(b, "GIF87a", 6) || !memcmp(b, "GIF89a", 6))) ||
	       (n >= 12 && !memcmp(b, "RIFF", 4) && !memcmp(b + 8, "WEBP", 4));
}

/* An image given as a file path (relative to the suite's folder, as req.c
 * reads it) must be a regular file holding a PNG, JPEG, GIF or WebP; data:
 * and http(s): URLs are the server's to judge. */
static enum err check_image_file(const struct jcheck *c, const char *q, const char *url)
{
	const char *slash = strrchr(c->file, '/');
	unsigned char head[12];
	struct buf path;
	struct diag why;
	struct stat st;
	ssize_t n = 0;
	int fd;
	enum err e = ERR_OK;

	if (!strncmp(url, "data:", 5) || !strncmp(url, "http://", 7) ||
	    !strncmp(url, "https://", 8))
		return ERR_OK;
	buf_init(&path, 1 << 16);
	if (url[0] == '/' || !slash)
		e = buf_puts(&path, url);
	else
		e = buf_printf(&path, "%.*s/%s", (int)(slash - c->file), c->file, url);
	if (e)
		e = diag_fail(c->d, e, "out of memory reading '%s'", c->file);
	else if (diag_init(&why), (fd = io_open_regular(path.data, 0, &st, &why)) < 0)
		e = jcheck_fail(c, q, st.st_mode ? "image '%s' is %s" : "image '%s': %s", path.data,
				io_reason(why.msg));
	else {
		n = read(fd, head, sizeof(head));
		close(fd);
		if (n < 0 || !image_magic(head, (size_t)n))
			e = jcheck_fail(c, q, "image '%s' is not a PNG, JPEG, GIF or WebP file "
					"(by its first bytes)", path.data);
	}
	buf_release(&path);
	return e;
}

static enum err check_part(const struct jcheck *c, const cJSON *part,
			   const char *p)
{
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(part, "type");
	const cJSON *img, *url;
	char q[JCHECK_PATH_MAX];

	if (!cJSON_IsObject(part))
		return jcheck_fail(c, p, "expected a content part object, got %s",
				   jcheck_type(part));
	jcheck_join(q, p, "type");
	if (!cJSON_IsString(type))
		return jcheck_fail(c, q, "expected a string ('text' or 'image_url')");
	if (!strcmp(type->valuestring, "text")) {
		jcheck_join(q, p, "text");
		return jcheck_want(c, cJSON_GetObjectItemCaseSensitive(part, "text"),
				   q, cJSON_IsString(cJSON_GetObjectItemCaseSensitive(part, "text")),
				   "a string");
	}
	if (strcmp(type->valuestring, "image_url"))
		return jcheck_fail(c, q, "unknown content part type '%s' (expected 'text' or 'image_url')",
				   type->valuestring);
	img = cJSON_GetObjectItemCaseSensitive(part, "image_url");
	url = cJSON_GetObjectItemCaseSensitive(img, "url");
	jcheck_join(q, p, "image_url.url");
	if (!cJSON_IsString(url) || !*url->valuestring)
		return jcheck_fail(c, q, "expected the image as a non-empty string (a data: URL or a file path)");
	return check_image_file(c, q, url->valuestring);
}

static enum err check_message(const struct jcheck *c, const cJSON *m,
			      const char *p)
{
	const cJSON *role, *content, *it;
	char q[JCHECK_PATH_MAX], r[JCHECK_PATH_MAX];
	size_t i = 0;
	enum err e;

	if (!cJSON_IsObject(m))
		return jcheck_fail(c, p, "expected a message object, got %s",
				   jcheck_type(m));
	role = cJSON_GetObjectItemCaseSensitive(m, "role");
	jcheck_join(q, p, "role");
	if (!cJSON_IsString(role))
		return jcheck_fail(c, role ? q : p, role ? "expected a string" : "missing 'role'");
	if (!jcheck_in(role->valuestring, roles))
		return jcheck_fail(c, q, "unknown role '%s'", role->valuestring);
	content = cJSON_GetObjectItemCaseSensitive(m, "content");
	jcheck_join(q, p, "content");
	if (!content || cJSON_IsNull(content)) {
		if (!strcmp(role->valuestring, "assistant") &&
		    cJSON_GetObjectItemCaseSensitive(m, "tool_calls"))
			return ERR_OK;
		return jcheck_fail(c, p, "missing 'content'");
	}
	if (cJSON_IsString(content))
		return ERR_OK;
	if (!cJSON_IsArray(content))
		return jcheck_fail(c, q, "expected a string or an array of parts, got %s",
				   jcheck_type(content));
	cJSON_ArrayForEach(it, content) {
		jcheck_index(r, q, i++);
		e = check_part(c, it, r);
		if (e)
			return e;
	}
	return ERR_OK;
}

static enum err check_messages(const struct jcheck *c, const cJSON *v,
			       const char *p)
{
	const cJSON *it;
	char q[JCHECK_PATH_MAX];
	size_t i = 0;
	enum err e;

	if (!cJSON_IsArray(v))
		return jcheck_fail(c, p, "expected an array of messages, got %s",
				   jcheck_type(v));
	if (!cJSON_GetArraySize(v))
		return jcheck_fail(c, p, "expected at least one message");
	cJSON_ArrayForEach(it, v) {
		jcheck_index(q, p, i++);
		e = check_message(c, it, q);
		if (e)
			return e;
	}
	return ERR_OK;
}

static enum err check_tools(const struct jcheck *c, const cJSON *v, const char *p)
{
	const cJSON *it;
	char q[JCHECK_PATH_MAX];
	size_t i = 0;

	if (!cJSON_IsArray(v) || !cJSON_GetArraySize(v))
		return jcheck_fail(c, p, "expected a non-empty array of tools, got %s",
				   jcheck_type(v));
	cJSON_ArrayForEach(it, v) {
		const cJSON *fn = cJSON_GetObjectItemCaseSensitive(it, "function");
		jcheck_index(q, p, i++);
		if (!cJSON_IsObject(it))
			return jcheck_fail(c, q, "expected a tool object, got %s",
					   jcheck_type(it));
		if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(fn, "name"))) {
			jcheck_join(q, q, "function.name");
			return jcheck_fail(c, q, "expected the tool's name as a string");
		}
	}
	return ERR_OK;
}

/* An array of 1 to `max` integers in [0, hi] (all different when `unique`);
 * `what` names them in the message. */
static enum err int_array(const struct jcheck *c, const cJSON *f, const char *q,
			  int max, double hi, const char *what, int unique)
{
	const cJSON *it, *o;
	char r[JCHECK_PATH_MAX];
	size_t i = 0;
	enum err e;

	if (!cJSON_IsArray(f) || !cJSON_GetArraySize(f) || cJSON_GetArraySize(f) > max)
		return jcheck_fail(c, q, "expected an array of 1 to %d %s", max, what);
	cJSON_ArrayForEach(it, f) {
		jcheck_index(r, q, i++);
		if ((e = jcheck_int(c, it, r, 0, hi, NULL)))
			return e;
		for (o = f->child; unique && o != it; o = o->next)
			if (o->valuedouble == it->valuedouble)
				return jcheck_fail(c, r, "seed %.0f appears twice", it->valuedouble);
	}
	return ERR_OK;
}

/* The probe options of "recall" (recprobe.h): "jitter" and "cache". */
static enum err check_probe(const struct jcheck *c, const cJSON *v, const char *p)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(v, "jitter");
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(v, "cache");
	char q[JCHECK_PATH_MAX];
	enum err e;

	jcheck_join(q, p, "jitter");
	if (j && (e = jcheck_int(c, j, q, 1, RECPROBE_MAX_JITTER, NULL)))
		return e;
	jcheck_join(q, p, "cache");
	if (k && !cJSON_IsBool(k))
		return jcheck_fail(c, q, "expected true or false, got %s", jcheck_type(k));
	if (j && j->valuedouble > 1 && cJSON_IsTrue(k))
		return jcheck_fail(c, q, "a cache probe has no jitter: use two cases");
	jcheck_join(q, p, "jitter");
	if (j && j->valuedouble > 1 && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(v, "tokens")))
		return jcheck_fail(c, q, "jitter needs a number of \"tokens\": with \"max\" the "
				   "longer lengths would not fit");
	return ERR_OK;
}

static enum err check_recall(const struct jcheck *c, const cJSON *v,
			     const char *p)
{
	const cJSON *f;
	char q[JCHECK_PATH_MAX];
	enum err e;

	if (!cJSON_IsObject(v))
		return jcheck_fail(c, p, "expected an object, got %s", jcheck_type(v));
	e = jcheck_keys(c, v, p, recall_keys, "recall");
	if (!e)
		e = jcheck_dupes(c, v, p);
	if (e)
		return e;
	jcheck_join(q, p, "tokens");
	f = cJSON_GetObjectItemCaseSensitive(v, "tokens");
	if (!f)
		return jcheck_fail(c, p, "missing 'tokens' (the exact prompt size)");
	if (cJSON_IsString(f) && strcmp(f->valuestring, "max"))
		return jcheck_fail(c, q, "expected an integer or \"max\", got string '%.40s'",
				   f->valuestring);
	if (!cJSON_IsString(f) && (e = jcheck_int(c, f, q, 64, 100000000, NULL)))
		return e;
	jcheck_join(q, p, "depths");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "depths")) &&
	    (e = int_array(c, f, q, SUITE_MAX_DEPTHS, 100, "percentages", 0)))
		return e;
	jcheck_join(q, p, "seeds");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "seeds")) &&
	    (e = int_array(c, f, q, SUITE_MAX_SEEDS, 9007199254740991.0, "seeds", 1)))
		return e;
	jcheck_join(q, p, "needles");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "needles")) &&
	    (e = jcheck_int(c, f, q, 1, SUITE_MAX_DEPTHS, NULL)))
		return e;
	jcheck_join(q, p, "distractors");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "distractors")) &&
	    (e = jcheck_int(c, f, q, 0, 1000, NULL)))
		return e;
	jcheck_join(q, p, "filler");
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "filler")) &&
	    (!cJSON_IsString(f) || !jcheck_in(f->valuestring, fillers)))
		return jcheck_fail(c, q, "expected one of 'prose', 'code', 'zh', 'mixed'");
	return check_probe(c, v, p);
}

/* "request": more members of the request body, sent as they are
 * (response_format, structured_outputs, guided_json, logit_bias, ...), never
 * one that needle writes or a case field sets. */
static enum err check_request(const struct jcheck *c, const cJSON *v, const char *p)
{
	const cJSON *it;
	char q[JCHECK_PATH_MAX];
	enum err e;

	if (!cJSON_IsObject(v))
		return jcheck_fail(c, p, "expected an object of request members, got %s", jcheck_type(v));
	if ((e = jcheck_dupes(c, v, p)))
		return e;
	cJSON_ArrayForEach(it, v) {
		jcheck_join(q, p, it->string);
		if (jcheck_in(it->string, request_owned))
			return jcheck_fail(c, q, "'%s' is needle's to write", it->string);
		if (jcheck_in(it->string, case_keys))
			return jcheck_fail(c, q, "set '%s' as the case's own field", it->string);
	}
	return ERR_OK;
}

static enum err check_field(const struct jcheck *c, const cJSON *v,
			    const char *p)
{
	const char *k = v->string;

	if (!strcmp(k, "id")) {
		if (!cJSON_IsString(v) || !*v->valuestring)
			return jcheck_fail(c, p, "expected a non-empty string, got %s",
					   jcheck_type(v));
		if (strlen(v->valuestring) > SUITE_ID_MAX)
			return jcheck_fail(c, p, "id of %zu bytes is longer than %d",
					   strlen(v->valuestring), SUITE_ID_MAX);
		return ERR_OK;
	}
	if (!strcmp(k, "kind")) {
		const char *hint;
		if (!cJSON_IsString(v))
			return jcheck_fail(c, p, "expected a string, got %s", jcheck_type(v));
		if (jcheck_in(v->valuestring, kind_names))
			return ERR_OK;
		hint = hint_closest(v->valuestring, kind_names);
		return jcheck_fail(c, p, "unknown kind '%s'%s%s%s (expected chat, recall, tool_call, multi_turn, image_order or load)",
				   v->valuestring, hint ? " (did you mean '" : "",
				   hint ? hint : "", hint ? "'?)" : "");
	}
	if (!strcmp(k, "description") || !strcmp(k, "prompt") || !strcmp(k, "during"))
		return jcheck_want(c, v, p, cJSON_IsString(v), "a string");
	if (!strcmp(k, "messages"))
		return check_messages(c, v, p);
	if (!strcmp(k, "tools"))
		return check_tools(c, v, p);
	if (!strcmp(k, "tool_choice"))
		return jcheck_want(c, v, p, cJSON_IsString(v) || cJSON_IsObject(v),
				   "a string or an object");
	if (!strcmp(k, "temperature"))
		return !cJSON_IsNumber(v) ? jcheck_want(c, v, p, 0, "a number")
		       : v->valuedouble < 0 || v->valuedouble > 100
			       ? jcheck_fail(c, p, "%.17g is out of range [0, 100]", v->valuedouble)
			       : ERR_OK;
	if (!strcmp(k, "top_p"))
		return !cJSON_IsNumber(v) ? jcheck_want(c, v, p, 0, "a number")
		       : v->valuedouble <= 0 || v->valuedouble > 1
			       ? jcheck_fail(c, p, "%.17g is out of range (0, 1]", v->valuedouble)
			       : ERR_OK;
	if (!strcmp(k, "max_tokens"))
		return jcheck_int(c, v, p, 1, 100000000, NULL);
	if (!strcmp(k, "min_tokens"))
		return jcheck_int(c, v, p, 0, 100000000, NULL);
	if (!strcmp(k, "seed"))
		return jcheck_int(c, v, p, -9007199254740991.0, 9007199254740991.0, NULL);
	if (!strcmp(k, "repeat"))
		return jcheck_int(c, v, p, 1, SUITE_MAX_REPEAT, NULL);
	if (!strcmp(k, "usage_tolerance"))
		return jcheck_int(c, v, p, 0, 100000000, NULL);
	if (!strcmp(k, "ignore_eos"))
		return jcheck_want(c, v, p, cJSON_IsBool(v), "a boolean");
	if (!strcmp(k, "chat_template_kwargs"))
		return jcheck_want(c, v, p, cJSON_IsObject(v), "an object");
	if (!strcmp(k, "reasoning_effort"))
		return jcheck_want(c, v, p, cJSON_IsString(v) || cJSON_IsNumber(v),
				   "a string or a number");
	if (!strcmp(k, "recall"))
		return check_recall(c, v, p);
	if (!strcmp(k, "load"))
		return loadspec_parse(v, c->file, p, NULL, c->d);
	if (!strcmp(k, "expect"))
		return expect_check(c, v, p);
	if (!strcmp(k, "request"))
		return check_request(c, v, p);
	if (!strcmp(k, "parity"))
		return jcheck_want(c, v, p, cJSON_IsBool(v), "a boolean");
	return jcheck_fail(c, p, "unknown key '%s'", k);
}

/* Checks every field of a case (or of "defaults") where it is written. */
static enum err check_fields(const struct jcheck *c, const cJSON *obj,
			     const char *jpath, int is_defaults)
{
	const cJSON *it;
	char p[JCHECK_PATH_MAX];
	enum err e;

	if (!cJSON_IsObject(obj))
		return jcheck_fail(c, jpath, "expected an object, got %s", jcheck_type(obj));
	if ((e = jcheck_keys(c, obj, jpath, case_keys, "case")) ||
	    (e = jcheck_dupes(c, obj, jpath)))
		return e;
	cJSON_ArrayForEach(it, obj) {
		jcheck_join(p, jpath, it->string);
		if (is_defaults && !strcmp(it->string, "id"))
			return jcheck_fail(c, p, "'id' cannot have a default");
		if ((e = check_field(c, it, p)))
			return e;
	}
	return ERR_OK;
}

/* Defaults first, then the case's own fields replacing them. */
/* The case with the defaults it does not set; NULL when out of memory. */
static cJSON *merge(const cJSON *defaults, const cJSON *kase)
{
	struct json_build jb;
	cJSON *m;
	const cJSON *it;

	json_build_init(&jb);
	m = json_new_obj(&jb);
	cJSON_ArrayForEach(it, defaults)
		if (!jget(kase, it->string))
			json_add_dup(&jb, m, it->string, it);
	cJSON_ArrayForEach(it, kase)
		json_add_dup(&jb, m, it->string, it);
	json_build_end(&jb, &m, "a case", NULL);
	return m;
}

static int count_images(const cJSON *messages)
{
	const cJSON *m, *part;
	int n = 0;

	cJSON_ArrayForEach(m, messages) {
		const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
		if (!cJSON_IsArray(content))
			continue;
		cJSON_ArrayForEach(part, content) {
			const cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "type");
			n += cJSON_IsString(t) && !strcmp(t->valuestring, "image_url");
		}
	}
	return n;
}

static int has_role(const cJSON *messages, const char *role)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, messages) {
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(m, "role");
		if (cJSON_IsString(r) && !strcmp(r->valuestring, role))
			return 1;
	}
	return 0;
}

/* `v` was checked where it was written, or is NULL (a recall case without
 * "recall", which check_case then refuses): every field may be absent. */
static void fill_recall(struct suite_recall *r, const cJSON *v)
{
	const cJSON *f, *it;

	f = cJSON_GetObjectItemCaseSensitive(v, "tokens");
	r->tokens = cJSON_IsString(f) ? SUITE_TOKENS_MAX : f ? (long)f->valuedouble : 0;
	f = cJSON_GetObjectItemCaseSensitive(v, "depths");
	if (f) {
		cJSON_ArrayForEach(it, f)
			r->depths[r->ndepths++] = (int)it->valuedouble;
	} else {
		r->depths[0] = 10, r->depths[1] = 50, r->depths[2] = 90;
		r->ndepths = 3;
	}
	f = cJSON_GetObjectItemCaseSensitive(v, "seeds");
	if (f) {
		cJSON_ArrayForEach(it, f)
			r->seeds[r->nseeds++] = (long)it->valuedouble;
	} else {
		r->seeds[0] = 1;
		r->nseeds = 1;
	}
	f = cJSON_GetObjectItemCaseSensitive(v, "needles");
	r->needles = f ? (int)f->valuedouble : r->ndepths;
	f = cJSON_GetObjectItemCaseSensitive(v, "filler");
	r->filler = f ? f->valuestring : "prose";
	f = cJSON_GetObjectItemCaseSensitive(v, "distractors");
	r->distractors = f ? (int)f->valuedouble : 0;
	f = cJSON_GetObjectItemCaseSensitive(v, "jitter");
	r->jitter = f ? (int)f->valuedouble : 1;
	r->cache = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "cache"));
}

/* Fills the typed view of a merged case. */
static void fill_case(struct suite_case *k, const cJSON *m, size_t index)
{
	const cJSON *f;
	size_t i;

	memset(k, 0, sizeof(*k));
	k->index = index;
	k->json = m;
	k->id = jget(m, "id")->valuestring;
	f = jget(m, "kind");
	k->kind = SUITE_CHAT;
	for (i = 0; f && kind_names[i]; i++)
		if (!strcmp(f->valuestring, kind_names[i]))
			k->kind = (enum suite_kind)i;
	k->messages = jget(m, "messages");
	k->prompt = (f = jget(m, "prompt")) ? f->valuestring : NULL;
	k->tools = jget(m, "tools");
	k->kwargs = jget(m, "chat_template_kwargs");
	k->repeat = (f = jget(m, "repeat")) ? (long)f->valuedouble : 1;
	k->usage_tolerance = (f = jget(m, "usage_tolerance")) ? (long)f->valuedouble : 0;
	k->max_tokens = (f = jget(m, "max_tokens")) ? (long)f->valuedouble : 0;
	if ((f = jget(m, "seed"))) {
		k->has_seed = 1;
		k->seed = (long)f->valuedouble;
	}
	k->ignore_eos = cJSON_IsTrue(jget(m, "ignore_eos"));
	k->parity = cJSON_IsTrue(jget(m, "parity"));
	k->during = (f = jget(m, "during")) ? f->valuestring : NULL;
	if (k->kind == SUITE_RECALL)
		fill_recall(&k->recall, jget(m, "recall"));
	if (k->kind == SUITE_LOAD && jget(m, "load")) /* validated where written */
		(void)loadspec_parse(jget(m, "load"), "", "", &k->load, NULL);
}

/* The typed "expect" of a merged case (suite_case.expect), its schema
 * resolved ("response_format": the case's own) and checked (schema.h) at
 * the path of the case `p`. */
static enum err parse_expect(const struct jcheck *c, struct suite_case *k, const char *p)
{
	enum err e = expect_parse(jget(k->json, "expect"), &k->expect, c->d);
	const cJSON *rf = jget(jget(k->json, "request"), "response_format");
	char q[JCHECK_PATH_MAX], where[SCHEMA_WHERE_MAX], why[SCHEMA_WHY_MAX];

	if (e) {
		diag_prefix(c->d, "%s", c->file);
		return e;
	}
	if (!k->expect.schema)
		return ERR_OK;
	jcheck_join(q, p, "expect");
	jcheck_join(q, q, "schema");
	if (cJSON_IsString(k->expect.schema)) {
		k->expect.schema = jget(jget(rf, "json_schema"), "schema");
		jcheck_join(q, p, "request");
		jcheck_join(q, q, "response_format");
		if (!k->expect.schema)
			return jcheck_fail(c, q, "expect.schema is \"response_format\" but there is no "
					   "json_schema.schema here");
		jcheck_join(q, q, "json_schema");
		jcheck_join(q, q, "schema");
	}
	if (schema_check(k->expect.schema, where, why, sizeof(why)))
		return jcheck_fail(c, q, "%s%s%s", where, where[0] ? ": " : "", why);
	return ERR_OK;
}

/* Kind-specific rules on the merged case. */
static enum err check_case(const struct jcheck *c, const struct suite_case *k,
			   const char *p)
{
	const cJSON *min = jget(k->json, "min_tokens");
	int chatty = k->kind != SUITE_RECALL && k->kind != SUITE_LOAD;

	if (chatty && !k->messages && !k->prompt)
		return jcheck_fail(c, p, "a %s case needs 'messages'%s", suite_kind_name(k->kind),
				   k->kind == SUITE_CHAT ? " or 'prompt'" : "");
	if (k->messages && k->prompt)
		return jcheck_fail(c, p, "give 'messages' or 'prompt', not both");
	if (k->prompt && k->kind != SUITE_CHAT)
		return jcheck_fail(c, p, "'prompt' (raw completion) is for chat cases only");
	if (k->kind == SUITE_RECALL) {
		if (!jget(k->json, "recall"))
			return jcheck_fail(c, p, "a recall case needs 'recall' (at least {\"tokens\": N})");
		if (k->messages || k->prompt)
			return jcheck_fail(c, p, "a recall case is generated: remove 'messages'/'prompt'");
		if (jget(k->json, "expect"))
			return jcheck_fail(c, p, "a recall case is graded against its generated needles: remove 'expect'");
		if (k->recall.needles < k->recall.ndepths)
			return jcheck_fail(c, p, "recall.needles (%d) is less than the number of depths (%d)",
					   k->recall.needles, k->recall.ndepths);
	} else if (jget(k->json, "recall")) {
		return jcheck_fail(c, p, "'recall' is only for recall cases");
	}
	if (k->kind == SUITE_LOAD) {
		if (!jget(k->json, "load"))
			return jcheck_fail(c, p, "a load case needs 'load' (at least input_tokens, output_tokens, concurrency or rate, requests)");
		if (k->messages || k->prompt || jget(k->json, "expect"))
			return jcheck_fail(c, p, "a load case is generated and checked for exact lengths: remove 'messages'/'prompt'/'expect'");
	} else if (jget(k->json, "load")) {
		return jcheck_fail(c, p, "'load' is only for load cases");
	}
	if (k->parity && (k->kind == SUITE_RECALL || k->kind == SUITE_LOAD))
		return jcheck_fail(c, p, "'parity' is for chat, tool_call, multi_turn and image_order cases");
	if (k->parity && !(cJSON_IsNumber(jget(k->json, "temperature")) && jget(k->json, "temperature")->valuedouble == 0))
		return jcheck_fail(c, p, "'parity' compares two answers to one request: it needs \"temperature\": 0");
	if (k->kind == SUITE_TOOL_CALL && (!k->tools ||
	    (k->expect.kind != EXPECT_TOOL_CALLS && !k->expect.no_tool_call)))
		return jcheck_fail(c, p, "a tool_call case needs 'tools' and 'expect.tool_call', 'expect.tool_calls' or 'expect.no_tool_call'");
	if (k->kind != SUITE_TOOL_CALL && k->expect.kind == EXPECT_TOOL_CALLS)
		return jcheck_fail(c, p, "'expect.tool_call' is only for tool_call cases");
	if (k->kind == SUITE_MULTI_TURN && !has_role(k->messages, "assistant"))
		return jcheck_fail(c, p, "a multi_turn case needs an earlier assistant turn in 'messages'");
	if (k->kind == SUITE_IMAGE_ORDER && count_images(k->messages) < 2)
		return jcheck_fail(c, p, "an image_order case needs at least two images in 'messages'");
	if (k->ignore_eos && !k->max_tokens)
		return jcheck_fail(c, p, "'ignore_eos' needs 'max_tokens' (the fixed length)");
	if (min && k->max_tokens && (long)min->valuedouble > k->max_tokens)
		return jcheck_fail(c, p, "'min_tokens' (%ld) is greater than 'max_tokens' (%ld)",
				   (long)min->valuedouble, k->max_tokens);
	return ERR_OK;
}

/* 1-based line and column of byte `off`. */
static void line_col(const char *text, size_t off, size_t *line, size_t *col)
{
	size_t i;

	*line = 1, *col = 1;
	for (i = 0; i < off; i++) {
		if (text[i] == '\n')
			(*line)++, *col = 1;
		else
			(*col)++;
	}
}

static enum err check_top(const struct jcheck *c, const cJSON *root)
{
	const cJSON *f;
	enum err e;

	if (!cJSON_IsObject(root))
		return jcheck_fail(c, NULL, "expected a JSON object at the top, got %s",
				   jcheck_type(root));
	if ((e = jcheck_keys(c, root, "", top_keys, "top-level")) ||
	    (e = jcheck_dupes(c, root, "")))
		return e;
	f = jget(root, "suite");
	if (!f)
		return jcheck_fail(c, NULL, "missing 'suite' (the suite's name)");
	if (!cJSON_IsString(f) || !*f->valuestring)
		return jcheck_fail(c, "suite", "expected a non-empty string, got %s", jcheck_type(f));
	f = jget(root, "description");
	if (f && !cJSON_IsString(f))
		return jcheck_fail(c, "description", "expected a string, got %s", jcheck_type(f));
	f = jget(root, "defaults");
	if (f && (e = check_fields(c, f, "defaults", 1)))
		return e;
	f = jget(root, "cases");
	if (!f)
		return jcheck_fail(c, NULL, "missing 'cases'");
	if (!cJSON_IsArray(f) || !cJSON_GetArraySize(f))
		return jcheck_fail(c, "cases", "expected a non-empty array of cases, got %s",
				   cJSON_IsArray(f) ? "an empty array" : jcheck_type(f));
	if (cJSON_GetArraySize(f) > SUITE_MAX_CASES)
		return jcheck_fail(c, "cases", "more than %d cases", SUITE_MAX_CASES);
	return ERR_OK;
}

/* "during" names a load case of the suite, and is not on one. */
static enum err check_during(const struct jcheck *c, const struct suite *s)
{
	size_t i;
	char p[JCHECK_PATH_MAX], q[JCHECK_PATH_MAX];

	for (i = 0; i < s->ncases; i++) {
		const struct suite_case *k = &s->cases[i], *l;
		if (!k->during)
			continue;
		jcheck_index(p, "cases", i);
		jcheck_join(q, p, "during");
		l = suite_find(s, k->during);
		if (k->kind == SUITE_LOAD)
			return jcheck_fail(c, q, "a load case cannot run during another");
		if (!l || l->kind != SUITE_LOAD)
			return jcheck_fail(c, q, "'%s' is not a load case of this suite", k->during);
	}
	return ERR_OK;
}

static enum err build_cases(const struct jcheck *c, struct suite *s)
{
	const cJSON *defaults = jget(s->root, "defaults"), *it;
	size_t i = 0, j;
	char p[JCHECK_PATH_MAX];
	enum err e;

	s->merged = cJSON_CreateArray();
	s->cases = mem_calloc((size_t)cJSON_GetArraySize(jget(s->root, "cases")),
			      sizeof(*s->cases));
	if (!s->merged || !s->cases)
		return diag_fail(c->d, ERR_NOMEM, "out of memory reading '%s'", c->file);
	cJSON_ArrayForEach(it, jget(s->root, "cases")) {
		cJSON *m;
		jcheck_index(p, "cases", i);
		if ((e = check_fields(c, it, p, 0)))
			return e;
		if (!jget(it, "id"))
			return jcheck_fail(c, p, "missing 'id'");
		m = merge(defaults, it);
		if (!m || !cJSON_AddItemToArray(s->merged, m)) {
			cJSON_Delete(m);
			return diag_fail(c->d, ERR_NOMEM, "out of memory reading '%s'", c->file);
		}
		fill_case(&s->cases[i], m, i);
		for (j = 0; j < i; j++)
			if (!strcmp(s->cases[j].id, s->cases[i].id)) {
				char q[JCHECK_PATH_MAX];
				jcheck_join(q, p, "id");
				return jcheck_fail(c, q, "duplicate id '%s' (first at cases[%zu])",
						   s->cases[i].id, j);
			}
		s->ncases = ++i;
		if ((e = parse_expect(c, &s->cases[i - 1], p)) ||
		    (e = check_case(c, &s->cases[i - 1], p)))
			return e;
	}
	return check_during(c, s);
}

/* ---- strings holding \u0000 -------------------------------------------- */

#define NUL_MAX_DEPTH 1024 /* beyond cJSON's nesting limit (1000) */
#define NUL_KEY_DEPTH 32   /* frames whose key is kept for the path */

struct nul_scan {
	unsigned char is_arr[NUL_MAX_DEPTH];
	size_t idx[NUL_MAX_DEPTH];
	char key[NUL_KEY_DEPTH][64];
	int depth;
};

/* Skips the string starting at t[*i] == '"'; *i ends on the closing quote.
 * Returns 1 if it holds the escape \u0000. Copies up to cap-1 raw bytes into
 * `raw` when given. */
static int nul_string(const char *t, size_t len, size_t *i, char *raw, size_t cap)
{
	size_t j = *i + 1, n = 0;
	int nul = 0;

	for (; j < len && t[j] != '"'; j++) {
		if (raw && n + 1 < cap)
			raw[n++] = t[j];
		if (t[j] == '\\' && j + 1 < len) {
			if (t[j + 1] == 'u' && j + 5 < len && !memcmp(t + j + 2, "0000", 4))
				nul = 1;
			if (raw && n + 1 < cap)
				raw[n++] = t[j + 1];
			j++;
		}
	}
	if (raw)
		raw[n] = '\0';
	*i = j;
	return nul;
}

static void nul_path(const struct nul_scan *s, int with_key, char *out)
{
	int f, n = s->depth < NUL_KEY_DEPTH ? s->depth : NUL_KEY_DEPTH;

	out[0] = '\0';
	for (f = 0; f < n; f++) {
		if (s->is_arr[f])
			jcheck_index(out, out, s->idx[f]);
		else if (f < n - 1 || with_key)
			jcheck_join(out, out, s->key[f]);
	}
}

/* cJSON ends a string at \u0000 and keeps no length, so a suite string holding
 * one would be sent and counted cut short without a word. Scans the (already
 * valid) JSON text and fails naming the first such string's JSON path. */
static enum err check_nul(const struct jcheck *c, const char *t, size_t len)
{
	struct nul_scan s; /* ~11 KB */
	char p[JCHECK_PATH_MAX];
	int expect_key = 0;
	size_t i;

	memset(&s, 0, sizeof(s));
	for (i = 0; i < len; i++) {
		int top = s.depth - 1;

		if (t[i] == '{' || t[i] == '[') {
			if (s.depth == NUL_MAX_DEPTH)
				return ERR_OK; /* cJSON refused it already */
			s.is_arr[s.depth] = t[i] == '[';
			s.idx[s.depth] = 0;
			if (s.depth < NUL_KEY_DEPTH)
				s.key[s.depth][0] = '\0';
			s.depth++;
			expect_key = t[i] == '{';
		} else if (t[i] == '}' || t[i] == ']') {
			s.depth--;
			expect_key = 0;
		} else if (t[i] == ',' && top >= 0) {
			if (s.is_arr[top])
				s.idx[top]++;
			else
				expect_key = 1;
		} else if (t[i] == '"') {
			int is_key = expect_key && top >= 0 && !s.is_arr[top];
			char *raw = is_key && top < NUL_KEY_DEPTH ? s.key[top] : NULL;
			int nul = nul_string(t, len, &i, raw, sizeof(s.key[0]));

			expect_key = 0;
			if (nul) {
				nul_path(&s, !is_key, p);
				return jcheck_fail(c, p, "%s holds \\u0000, which needle's JSON parser "
						   "would cut short", is_key ? "a key" : "the string");
			}
		}
	}
	return ERR_OK;
}

enum err suite_parse(const char *path, const char *text, size_t len,
		     struct suite **out, struct diag *d)
{
	struct jcheck c = {path, d};
	const char *end = NULL, *nul;
	struct suite *s;
	enum err e;

	*out = NULL;
	s = mem_calloc(1, sizeof(*s));
	if (!s || !(s->path = mem_strndup(path, strlen(path)))) {
		mem_free(s);
		return diag_fail(d, ERR_NOMEM, "out of memory reading '%s'", path);
	}
	if ((e = io_sha256_hex(text, len, s->sha256, d))) {
		suite_free(s);
		return e;
	}
	if ((e = utf8_check(text, len, d))) {
		diag_prefix(d, "suite '%s'", path);
		suite_free(s);
		return e;
	}
	if ((nul = memchr(text, '\0', len))) { /* JSON text has none (RFC 8259 §2) */
		size_t line, col;

		line_col(text, (size_t)(nul - text), &line, &col);
		e = jcheck_fail(&c, NULL, "a NUL byte at offset %zu (line %zu, column %zu): "
				"a suite is JSON text", (size_t)(nul - text), line, col);
		goto out;
	}
	/* json_parse tells out of memory from bad text; bad text is parsed
	 * again below for the line and column of the error */
	if (json_parse(text, len, &s->root, path, d) == ERR_NOMEM) {
		e = ERR_NOMEM;
		goto out;
	}
	if (s->root) {
		end = text + len;
	} else {
		diag_init(d);
		s->root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	}
	if (s->root) { /* nothing but whitespace may follow the value */
		const char *p = end;
		while (p < text + len && strchr(" \t\r\n", *p) && *p)
			p++;
		if (p < text + len) {
			cJSON_Delete(s->root);
			s->root = NULL;
			end = p;
		}
	}
	if (!s->root) {
		size_t line, col, off = end && end >= text ? (size_t)(end - text) : 0;
		if (!end)
			off = cJSON_GetErrorPtr() ? (size_t)(cJSON_GetErrorPtr() - text) : 0;
		if (off > len)
			off = len;
		line_col(text, off, &line, &col);
		e = jcheck_fail(&c, NULL, "not valid JSON at line %zu, column %zu", line, col);
		goto out;
	}
	if ((e = check_nul(&c, text, len)) || (e = check_top(&c, s->root)) ||
	    (e = build_cases(&c, s)))
		goto out;
	s->name = jget(s->root, "suite")->valuestring;
	s->description = cJSON_IsString(jget(s->root, "description"))
				 ? jget(s->root, "description")->valuestring
				 : NULL;
out:
	if (e)
		suite_free(s);
	else
		*out = s;
	return e;
}

enum err suite_load(const char *path, struct suite **out, struct diag *d)
{
	struct buf b;
	enum err e;

	*out = NULL;
	buf_init(&b, SUITE_MAX_BYTES);
	e = io_read_file(path, &b, d);
	if (e == ERR_LIMIT)
		diag_prefix(d, "suite '%s' is too large", path);
	if (!e)
		e = suite_parse(path, b.data, b.len, out, d);
	buf_release(&b);
	return e;
}

void suite_free(struct suite *s)
{
	if (!s)
		return;
	cJSON_Delete(s->root);
	cJSON_Delete(s->merged);
	for (size_t i = 0; s->cases && i < s->ncases; i++)
		expect_release(&s->cases[i].expect);
	mem_free(s->cases);
	mem_free(s->path);
	mem_free(s);
}

const struct suite_case *suite_find(const struct suite *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->ncases; i++)
		if (!strcmp(s->cases[i].id, id))
			return &s->cases[i];
	return NULL;
}
