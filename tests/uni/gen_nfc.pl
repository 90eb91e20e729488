#!/usr/bin/perl
# Generates the NFC part of harness/tok/uni_data.c: Unicode 9.0 canonical
# normalization data, as frozen in unicode-normalization-alignments 0.1.12
# (the crate behind HF tokenizers' NFC). Run once, by hand, and commit the
# output; the build never runs it:
#   perl tests/uni/gen_nfc.pl > build/uni_nfc.inc
# Source: perl 5.36's Unicode::Normalize and Unicode::UCD (Unicode 14.0). Every
# code point whose Age is above 9.0 is dropped, which is exact for the rest:
# Unicode's stability policy freezes the canonical decomposition, combining
# class and composition exclusion of every assigned character. Hangul
# syllables are left to the algorithm (uni.c). tests/cli/uni_classes.sh checks
# the result against the oracle's NFC.
use strict;
use warnings;
use Unicode::UCD qw(prop_invmap charinfo);
use Unicode::Normalize qw(getCanon getCombinClass getComposite isComp_Ex);

my ($age_r, $age_m) = prop_invmap('Age');
my @old;    # $old[cp] = 1 when assigned in Unicode <= 9.0
for my $i (0 .. $#$age_r) {
	my $lo = $age_r->[$i];
	my $hi = $i < $#$age_r ? $age_r->[$i + 1] - 1 : 0x10FFFF;
	my $a = $age_m->[$i];
	next if $a eq 'Unassigned' || $a !~ /^(\d+)\.(\d+)$/;
	next if $1 > 9;
	$old[$_] = 1 for $lo .. $hi;
}

my (@ccc, %decomp, @pairs, %second);
for my $cp (0 .. 0x10FFFF) {
	next unless $old[$cp];
	my $c = getCombinClass($cp);
	$ccc[$cp] = $c if $c;
	next if $cp >= 0xAC00 && $cp <= 0xD7A3;
	my $d = getCanon($cp);
	next unless defined $d && $d ne chr($cp);
	$decomp{$cp} = [map { ord } split //, $d];
	my $one = charinfo($cp)->{decomposition};
	next if $one eq '' || $one =~ /</;
	my @p = map { hex } split / /, $one;
	next unless @p == 2 && !isComp_Ex($cp);
	my $comp = getComposite($p[0], $p[1]);
	next unless defined $comp && $comp == $cp;
	die "component newer than its composite\n" unless $old[$p[0]] && $old[$p[1]];
	push @pairs, [@p, $cp];
	$second{$p[1]} = 1;
}

sub ranges {
	my ($in) = @_;    # code point => value (true)
	my @r;
	for my $cp (sort { $a <=> $b } keys %$in) {
		if (@r && $r[-1][1] == $cp - 1 && $r[-1][2] == $in->{$cp}) {
			$r[-1][1] = $cp;
		} else {
			push @r, [$cp, $cp, $in->{$cp}];
		}
	}
	return @r;
}
sub h { sprintf '0x%04X', $_[0] }

my %cccv = map { $_ => $ccc[$_] } grep { $ccc[$_] } 0 .. $#ccc;
my %unsafe = map { $_ => 1 } (keys %cccv, keys %decomp, keys %second,
	0x1161 .. 0x1175, 0x11A8 .. 0x11C2);

print "const struct uni_ccc_range nfc_ccc[] = {\n";
print "\t{", h($_->[0]), ", ", h($_->[1]), ", $_->[2]},\n" for ranges(\%cccv);
print "};\n\n";

print "/* Chars that may change under NFC or make a neighbour change: ccc != 0,\n";
print " * a canonical decomposition, or the second half of a composition. */\n";
print "const struct uni_range nfc_unsafe[] = {\n";
print "\t{", h($_->[0]), ", ", h($_->[1]), "},\n" for ranges(\%unsafe);
print "};\n\n";

my @pool;
print "const struct uni_decomp nfc_decomp[] = {\n";
for my $cp (sort { $a <=> $b } keys %decomp) {
	printf "\t{%s, %d, %d},\n", h($cp), scalar(@pool), scalar(@{$decomp{$cp}});
	push @pool, @{$decomp{$cp}};
}
print "};\n\nconst uint32_t nfc_decomp_pool[] = {\n";
for (my $i = 0; $i < @pool; $i += 8) {
	my $e = $i + 7 < $#pool ? $i + 7 : $#pool;
	print "\t", join(', ', map { h($_) } @pool[$i .. $e]), ",\n";
}
print "};\n\n";

print "const struct uni_comp nfc_comp[] = {\n";
for my $p (sort { $a->[0] <=> $b->[0] || $a->[1] <=> $b->[1] } @pairs) {
	print "\t{", join(', ', map { h($_) } @$p), "},\n";
}
print "};\n";
print "\n#define N(t) sizeof t / sizeof t[0]\n";
print "const size_t nfc_ccc_n = N(nfc_ccc), nfc_unsafe_n = N(nfc_unsafe),\n";
print "\tnfc_decomp_n = N(nfc_decomp), nfc_comp_n = N(nfc_comp);\n";
