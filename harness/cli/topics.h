/*
 * topics — the pages of docs/ compiled into the binary (base/embed.h, under
 * their paths), so that `needle help TOPIC` and the manual page render
 * the same text the repository's documentation holds: one source, no drift.
 *
 * A topic is a page's name without ".md" (`needle help cutover`), or one of
 * the sections below, which the manual page renders too:
 *   exit-status   docs/cutover.md "Exit statuses" (a list "- `N` text")
 */
#ifndef NEEDLE_TOPICS_H
#define NEEDLE_TOPICS_H

#include <stdio.h>

/* Writes topic `name` to `out` as its Markdown text; 0 when written, -1 when
 * there is no such topic. */
int topics_print(const char *name, FILE *out);

/* Writes the list of topics, one a line with the page's title, to `out`. */
void topics_list(FILE *out);

/* Writes the exit statuses (docs/cutover.md "Exit statuses") as man(7)
 * .TP paragraphs to `out`; -1 when the section is missing or holds no item. */
int topics_man_exit_status(FILE *out);

#endif
