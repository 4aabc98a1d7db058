#!/bin/sh
# embed.sh NAME FILE - print FILE as a C string constant called NAME.
printf 'const char %s[] =\n' "$1"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$/\\n"/' "$2"
printf ';\n'
