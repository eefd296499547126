#!/bin/sh
# tests/run_reference.sh SRC: docs/LANGUAGE.md is the whole language as the
# compiler accepts it: every built-in (frontend/builtins.c's table), every
# directive (frontend/directives.c's table), every type and every aggregate
# function appears there, written as code. A name added to the compiler and
# not to the reference fails here.
set -u
src=$1
doc=$src/docs/LANGUAGE.md
fail=0
names=$(
    sed -n '/^static const rf_builtin_info builtins\[\] = {/,/^};/p' "$src/frontend/builtins.c" |
        grep -o '"[a-z]*:[a-z_]*"'
    sed -n '/^static const struct { const char \*name; rf_type type; } type_names\[\] = {/,/^};/p' \
        "$src/frontend/builtins.c" | grep -o '"[a-z]*"'
    sed -n '/static const char \*n\[\] = {"total"/p' "$src/frontend/builtins.c" | grep -o '"[a-z]*"'
    grep -o '^    {"lang:[a-zA-Z:]*", D_' "$src/frontend/directives.c" | grep -o '"[^"]*"'
)
count=0
for q in $names; do
    n=$(echo "$q" | tr -d '"')
    count=$((count + 1))
    # as code: `name`, `name(`, `name[`, ``name[`p]`` or a declaration's type(x)
    if ! grep -q -e "\`$n[\`([]" -e "\`\`$n\[" "$doc"; then
        echo "FAIL: docs/LANGUAGE.md does not describe \`$n\`"
        fail=1
    fi
done
# the tables were found: 20 built-ins, 6 types, 5 aggregates, 7 directives at least
if [ "$count" -lt 38 ]; then echo "FAIL: only $count names read from the compiler's tables"; fail=1; fi
[ $fail = 0 ] && echo "ok: $count names, each in docs/LANGUAGE.md"
exit $fail
