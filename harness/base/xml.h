/*
 * xml — text made safe inside XML 1.0 and HTML: the one escaper of the
 * JUnit report and the HTML page. Only XML 1.0 characters come out: the C0
 * controls XML 1.0 forbids (all but tab, line feed and carriage return) and
 * DEL (which HTML forbids) become '?'; U+FFFE and U+FFFF (valid UTF-8, not
 * XML characters) and each byte that is not part of valid UTF-8 (a
 * hand-edited results.jsonl, a cut mid-character) become U+FFFD, visibly. A
 * stray byte from a model's answer never makes the file unreadable.
 */
#ifndef NEEDLE_XML_H
#define NEEDLE_XML_H

#include "buf.h"
#include "err.h"

/* Appends `s` as element text: & < > escaped, forbidden characters replaced. */
enum err xml_text(struct buf *out, const char *s);
/* Appends `s` for a double-quoted attribute value: also " and ', and tab,
 * line feed and carriage return as character references (an attribute's
 * white space is otherwise normalised to spaces by the parser). */
enum err xml_attr(struct buf *out, const char *s);

#endif
