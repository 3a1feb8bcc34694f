#!/usr/bin/env bash
# rapidjson_parse_length_test.sh <source dir>...: every RapidJSON parse in
# the tree passes a length. Without one RapidJSON reads up to a NUL, which
# a request body in nginx's buffer does not end with, and its SIMD paths
# (not built here, CMakeLists.txt) read whole 16-byte blocks past a NUL.
# Flags Parse(x) / Parse<flags>(x) with one argument, ParseInsitu, and
# StringStream (the NUL-terminated input stream).
set -euo pipefail
found=$(find "$@" \( -name '*.cpp' -o -name '*.hpp' \) -print0 | xargs -0 perl -0777 -ne '
  while (/\b(Parse(?:<[^;>]*>)?)\s*(\((?:[^()]++|(?2))*\))/g) {
    my ($call, $args) = ($1, $2);
    my $inner = substr($args, 1, -1);
    1 while $inner =~ s/\((?:[^()]*)\)|<[^<>]*>|\{[^{}]*\}|"(?:[^"\\]|\\.)*"//g;
    print "$ARGV: $call$args\n" if $inner !~ /,/;
  }
  print "$ARGV: ParseInsitu\n" while /\bParseInsitu\b/g;
  print "$ARGV: StringStream\n" while /\bStringStream\b/g;
')
if [ -n "$found" ]; then
  echo "FAIL: RapidJSON input without a length (pass data and size):" >&2
  echo "$found" | sed 's/^/  /' >&2
  exit 1
fi
echo "every RapidJSON parse passes a length"
