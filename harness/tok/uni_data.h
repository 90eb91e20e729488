/*
 * uni_data — the generated tables behind uni.c (harness/tok/uni_data.c, made by
 * tests/uni/gen_data.sh, and harness/tok/uni_pcre2.c, made by
 * tests/uni/gen_pcre2.c; never edited by hand). Read by uni.c and by the
 * hand-written pre-tokenizer scanner (tok_scan.c): keep the names stable.
 *
 * Every range list is sorted, with disjoint inclusive ranges, and contains
 * Unicode scalar values only (surrogates never appear).
 */
#ifndef NEEDLE_UNI_DATA_H
#define NEEDLE_UNI_DATA_H

#include <stddef.h>
#include <stdint.h>

struct uni_range {
	uint32_t lo, hi; /* inclusive */
};

/* A character class as HF's engine sees it: general categories "L", "Lu",
 * ... "Cn" (Oniguruma \p{..}), "onig_space"/"onig_digit"/"onig_word"
 * (Oniguruma \s \d \w), "rust_numeric" (char::is_numeric), "rust_word" and
 * "rust_space" (Rust regex \w and \s). */
struct uni_class {
	const char *name;
	const struct uni_range *r;
	size_t n;
};

struct uni_ccc_range {
	uint32_t lo, hi;
	uint8_t ccc; /* canonical combining class, never 0 here */
};

struct uni_decomp {
	uint32_t cp;
	uint16_t off; /* full canonical decomposition: nfc_decomp_pool[off..off+len) */
	uint8_t len;
};

struct uni_comp {
	uint32_t a, b, c; /* a + b composes to c; sorted by (a, b) */
};

/* Index of each class in uni_classes (the order gen_classes.js writes). */
enum uni_class_id {
	UNI_L, UNI_Lu, UNI_Ll, UNI_Lt, UNI_Lm, UNI_Lo,
	UNI_M, UNI_Mn, UNI_Mc, UNI_Me, UNI_N, UNI_Nd,
	UNI_Nl, UNI_No, UNI_P, UNI_Pc, UNI_Pd, UNI_Ps,
	UNI_Pe, UNI_Pi, UNI_Pf, UNI_Po, UNI_S, UNI_Sm,
	UNI_Sc, UNI_Sk, UNI_So, UNI_Z, UNI_Zs, UNI_Zl,
	UNI_Zp, UNI_C, UNI_Cc, UNI_Cf, UNI_Co, UNI_Cn,
	UNI_ONIG_SPACE, UNI_ONIG_DIGIT, UNI_ONIG_WORD,
	UNI_RUST_NUMERIC, UNI_RUST_WORD, UNI_RUST_SPACE,
	UNI_CLASS_COUNT
};

extern const struct uni_class uni_classes[];
extern const size_t uni_classes_n;

/* NFC at Unicode 9.0, characters assigned later are absent (inert). */
extern const struct uni_ccc_range nfc_ccc[];
extern const struct uni_range nfc_unsafe[];
extern const struct uni_decomp nfc_decomp[];
extern const uint32_t nfc_decomp_pool[];
extern const struct uni_comp nfc_comp[];
extern const size_t nfc_ccc_n, nfc_unsafe_n, nfc_decomp_n, nfc_comp_n;

/* How PCRE2 spells an HF class (uni_pcre2.c, generated for one Unicode
 * version of PCRE2's tables): the class is exactly the members `pcre2` plus
 * the ranges `add`. `pcre2` is NULL where no such spelling exists. */
struct uni_spelling {
	const char *pcre2; /* class members in PCRE2 syntax, e.g. "\\p{L}" */
	const struct uni_range *add;
	size_t n;
};

extern const char uni_pcre2_unicode[]; /* "14.0.0": PCRE2's Unicode version */
extern const struct uni_spelling uni_pcre2[UNI_CLASS_COUNT];

#endif
