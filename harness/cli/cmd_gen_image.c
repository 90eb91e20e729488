/*
 * needle gen image — deterministic PNGs of coloured shapes and a manifest that
 * says what each one shows (generators/image.h draws them).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "cli.h"
#include "cmd.h"
#include "generators/image.h"
#include "base/io.h"
#include "base/json.h"
#include "base/mem.h"

struct image_opts {
	long seed, count, size;
	const char *objects, *out;
	int numbers;
	int have_seed;
};

static const char examples[] =
	"  needle gen image --seed 7 --out imgs            # two seeded objects\n"
	"  needle gen image --seed 7 --count 6 --numbers --out imgs\n"
	"  needle gen image --objects 'red circle,blue square:42' --size 128 --out imgs\n"
	"\n"
	"Writes DIR/image-01.png, ... and DIR/manifest.json:\n"
	"  {\"seed\":7,\"size\":256,\"images\":[{\"file\":\"image-01.png\",\"text\":\"red circle\",\n"
	"   \"colour\":\"red\",\"shape\":\"circle\",\"label\":null,\"rgb\":\"#dc1e1e\",\n"
	"   \"centre\":[128,128],\"bytes\":1234,\"sha256\":\"...\"}, ...]}\n"
	"Colours: red blue green yellow purple orange.\n"
	"Shapes: circle square triangle star hexagon diamond.\n"
	"Labels (after ':'): up to 8 of A-Z 0-9 '-' and space, drawn in capitals.\n";

/* Writes one PNG and adds its manifest entry to `images`. */
static enum err write_one(const struct image_opts *o,
			  const struct image_object *obj, int index,
			  cJSON *images, struct diag *d)
{
	char name[32], path[4096], sha[IO_SHA256_HEX];
	struct buf png;
	struct json_build jb;
	cJSON *entry;
	enum err e;

	buf_init(&png, (size_t)64 << 20);
	snprintf(name, sizeof(name), "image-%02d.png", index + 1);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", o->out, name) >= sizeof(path)) {
		e = diag_fail(d, ERR_INPUT, "output path '%s' is too long", o->out);
		goto out;
	}
	e = image_png(obj, (int)o->size, &png, d);
	if (!e)
		e = io_write_file(path, png.data, png.len, d);
	if (!e)
		e = io_sha256_hex(png.data, png.len, sha, d);
	if (e)
		goto out;
	json_build_init(&jb);
	entry = image_object_json(&jb, images, NULL, obj, (int)o->size);
	json_add_str(&jb, entry, "file", name);
	json_add_int(&jb, entry, "bytes", (long long)png.len);
	json_add_str(&jb, entry, "sha256", sha);
	e = json_build_end(&jb, NULL, "the image manifest", d);
out:
	buf_release(&png);
	return e;
}

static enum err run(const struct image_opts *o, struct diag *d)
{
	struct image_object objs[IMAGE_COUNT_MAX];
	char path[4096];
	struct json_build jb;
	cJSON *man = NULL, *images;
	int n = 0, i;
	enum err e = ERR_OK;

	if (o->objects)
		e = image_parse_objects(o->objects, objs, IMAGE_COUNT_MAX, &n, d);
	else
		image_pick((uint64_t)o->seed, n = (int)o->count, o->numbers, objs);
	if (e) {
		diag_prefix(d, "option '--objects'");
		return e;
	}
	json_build_init(&jb);
	man = json_new_obj(&jb);
	if (o->have_seed)
		json_add_int(&jb, man, "seed", o->seed);
	else
		json_add_null(&jb, man, "seed");
	json_add_int(&jb, man, "size", o->size);
	images = json_add_arr(&jb, man, "images");
	e = json_build_end(&jb, &man, "the image manifest", d);
	if (!e)
		e = io_mkdirs(o->out, d);
	for (i = 0; !e && i < n; i++)
		e = write_one(o, &objs[i], i, images, d);
	snprintf(path, sizeof(path), "%s/manifest.json", o->out);
	if (!e)
		e = json_write_file(path, man, JSON_PRETTY, d);
	if (!e)
		printf("%d image%s in %s\n", n, n == 1 ? "" : "s", o->out);
	cJSON_Delete(man);
	return e;
}

/* Cross-option checks the table cannot express. */
static void validate(struct image_opts *o, int count_given, struct diag *d)
{
	if (!o->out)
		diag_fail(d, ERR_USAGE, "option '--out' is required");
	else if (!o->have_seed && !o->objects)
		diag_fail(d, ERR_USAGE, "option '--seed' is required (or give '--objects')");
	else if (o->have_seed && o->seed < 0)
		diag_fail(d, ERR_USAGE, "option '--seed' wants a non-negative integer, got '%ld'",
			  o->seed);
	else if (o->objects && count_given)
		diag_fail(d, ERR_USAGE, "options '--objects' and '--count' exclude each other");
	else if (o->objects && o->numbers)
		diag_fail(d, ERR_USAGE, "option '--numbers' is for seeded objects; "
			  "give labels in '--objects' as 'red circle:42'");
	else if (o->count < 1 || o->count > IMAGE_COUNT_MAX)
		diag_fail(d, ERR_USAGE, "option '--count' wants 1..%d, got '%ld'",
			  IMAGE_COUNT_MAX, o->count);
	else if (o->size < IMAGE_SIZE_MIN || o->size > IMAGE_SIZE_MAX)
		diag_fail(d, ERR_USAGE, "option '--size' wants %d..%d pixels, got '%ld'",
			  IMAGE_SIZE_MIN, IMAGE_SIZE_MAX, o->size);
	else if (o->numbers && o->size < 64)
		diag_fail(d, ERR_USAGE, "option '--numbers' needs '--size' of at least 64");
}

int cmd_gen_image(int argc, char **argv)
{
	struct image_opts o = {LONG_MIN, LONG_MIN, IMAGE_SIZE_DEFAULT, NULL, NULL, 0, 0};
	const struct cli_opt opts[] = {
		{"seed", 's', CLI_LONG, "S", "seed that picks the objects (required without --objects)", &o.seed},
		{"count", 'n', CLI_LONG, "N", "number of seeded images, 1..36 (default 2)", &o.count},
		{"objects", 0, CLI_STR, "LIST", "comma-separated 'COLOUR SHAPE[:LABEL]' instead of seeded ones", &o.objects},
		{"numbers", 0, CLI_FLAG, NULL, "write a two-digit number under each seeded shape", &o.numbers},
		{"size", 0, CLI_LONG, "PX", "width and height in pixels, 32..1024 (default 256)", &o.size},
		{"out", 'o', CLI_STR, "DIR", "output directory, created if missing (required)", &o.out},
	};
	const struct cli_cmd cmd = {
		"gen image", "--seed S [--count N] [--objects LIST] [--size PX] --out DIR",
		"Draw deterministic PNG images, one coloured shape each on white, optionally\n"
		"with a label in a built-in bitmap font, and a manifest of what each shows.\n"
		"The same options give the same bytes.",
		opts, sizeof(opts) / sizeof(opts[0]), examples, 0, 0,
		CLI_EXIT_PASS | CLI_EXIT_USAGE};
	const char *args[CLI_ARGS_MAX];
	int nargs, outcome;
	struct diag d;

	diag_init(&d);
	outcome = cli_start(&cmd, argc, argv, args, &nargs, &d);
	if (outcome == CLI_RUN) {
		int count_given = o.count != LONG_MIN;

		o.have_seed = o.seed != LONG_MIN;
		if (!count_given)
			o.count = 2;
		validate(&o, count_given, &d);
	}
	if (d.code)
		return cli_report("gen image", &d);
	if (outcome == CLI_HELP_SHOWN)
		return EXIT_PASS;
	if (run(&o, &d))
		return cli_report("gen image", &d);
	return EXIT_PASS;
}
