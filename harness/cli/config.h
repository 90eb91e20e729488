/*
 * config — the flags a team retypes on every command (endpoint, model,
 * tokenizer, template, ...) read from a JSON file, so `needle run smoke`
 * needs no more. The file is the first of: $NEEDLE_CONFIG (which must
 * exist), ./needle.json, $XDG_CONFIG_HOME/needle/config.json, else (no
 * XDG_CONFIG_HOME) ~/.config/needle/config.json. It is one JSON object
 * (parsed by cJSON):
 *
 *	{"base-url": "http://gpu-01:8000", "tokenizer": "deepseek-ai/DeepSeek-V3",
 *	 "template": "deepseek-v3", "run": {"concurrency": 8}}
 *
 * A top-level key is a long option name (without "--") and applies to every
 * command that has that option; an object under a command's name ("run",
 * "count", "gen haystack", ...) applies to that command only and wins over
 * the top level. A value is a string, a number, true (a flag; false leaves
 * it off) or, for a repeatable option, an array of strings. A key that is
 * not an option of the command at hand is ignored (it may be another's).
 *
 * Precedence: the command line, then the file, then the environment
 * variables options fall back to (OPENAI_BASE_URL, ...), then the defaults.
 * An option given on the command line takes nothing from the file (a
 * repeatable one included: the file's --base-url list is not added to).
 */
#ifndef NEEDLE_CONFIG_H
#define NEEDLE_CONFIG_H

#include "base/err.h"
#include "cli.h"

/* Replaces *argc, *argv with the file's options for `cmd` not given in
 * argv, followed by argv itself (static storage, valid until exit; the
 * file's values are kept as long). Leaves them alone without a file.
 * ERR_INPUT naming the file (unreadable, not JSON, a value of the wrong
 * kind), ERR_USAGE past CLI_ARGS_MAX arguments, ERR_NOMEM. */
enum err config_args(const struct cli_cmd *cmd, int *argc, char ***argv, struct diag *d);

#endif
