/*
 * jsame — whether two cJSON trees are the same node for node, for the tests
 * that hold a reader to the tree cJSON builds (test_jdoc, fuzz_jdoc).
 */
#ifndef NEEDLE_TEST_JSAME_H
#define NEEDLE_TEST_JSAME_H

#include <string.h>

#include <cjson/cJSON.h>

/* Whether trees `a` and `b` are the same node for node: types, valueint,
 * valuedouble bit for bit, strings, keys, and the sibling links (each
 * child's prev, the first child's prev at the last). */
__attribute__((unused)) static int same_tree(const cJSON *a, const cJSON *b)
{
	const cJSON *x, *y, *px = NULL;

	if (a->type != b->type || a->valueint != b->valueint ||
	    memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)) ||
	    !a->valuestring != !b->valuestring || !a->string != !b->string ||
	    (a->valuestring && strcmp(a->valuestring, b->valuestring)) ||
	    (a->string && strcmp(a->string, b->string)))
		return 0;
	for (x = a->child, y = b->child; x && y; px = x, x = x->next, y = y->next)
		if ((x != a->child && x->prev != px) || (y != b->child && !y->prev) || !same_tree(x, y))
			return 0;
	if (x || y)
		return 0;
	return !a->child || (a->child->prev == px && b->child->prev && !b->child->prev->next);
}

#endif
