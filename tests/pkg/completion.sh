#!/bin/bash
# completion/coil, sourced into a real bash with bash-completion's
# library and called as bash calls it (COMP_WORDS, COMP_CWORD): it
# offers exactly the options $COIL --help lists; an option's argument
# completes files, directories or the option's words; every option
# --help gives an argument is one of those or free text this file names
# (so a new option is a decision here, not a silent gap); and each word
# list is what $COIL accepts, no more and no fewer where its error says.
. "${srcdir:-.}/tests/lib/tap.sh"

lib=/usr/share/bash-completion/bash_completion
[ -r "$lib" ] || skip_all "no '$lib': apt-get install bash-completion"
comp=$(cd "$srcdir" && pwd)/completion/coil
case $COIL in /*) ;; *) COIL=$PWD/$COIL ;; esac
[ -r "$comp" ] || skip_all "no '$comp'"
help=$("$COIL" --help) || skip_all "'$COIL --help' failed"

# The placeholders whose argument is free text: nothing to complete.
free=" N SECS SIZE MODS REGEX KEY NAME ADDR "

# offers WORD...: the completions bash offers for the last WORD of the
# command line "coil WORD...", one a line, sorted, in $T/work.  As
# bash splits it: "--opt=x" is the words --opt, = and x.
mkdir "$T/work" "$T/work/adir" "$T/work/bdir"
: >"$T/work/afile"
: >"$T/work/bfile.transcript"
offers() {
	(cd "$T/work" && bash --norc --noprofile -c '
		. "$1"; . "$2"; shift 2
		COMP_WORDS=(coil "$@")
		COMP_CWORD=$#
		# The line as typed: no blanks around an "=" word.
		COMP_LINE=coil
		for ((i = 1; i <= $#; i++)); do
			w=${COMP_WORDS[i]}
			[[ $w == = || ${COMP_WORDS[i-1]} == = ]] ||
				COMP_LINE+=" "
			COMP_LINE+=$w
		done
		COMP_POINT=${#COMP_LINE}
		COMPREPLY=()
		# As bash calls it: the command, the word, the word before.
		_coil "$COIL" "${COMP_WORDS[COMP_CWORD]}" \
			"${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}" | sort' offers "$lib" \
		"$comp" "$@")
}
export COIL

# What --help lists: each option, and its placeholder if it takes one.
# The short forms are "-h, --help"; the rest begin with two spaces.
options=$(printf '%s\n' "$help" |
	sed -nE 's/^  +(-[A-Za-z], )?(--[a-z0-9-]+)( ([A-Z][A-Z0-9]*))?.*/\1\2 \4/p' |
	sed -E 's/^(-[A-Za-z]), (.*)/\1\n\2/' | sed 's/ *$//')
longs=$(printf '%s\n' "$options" | awk '{ print $1 }' | sort)
expect_match "--help lists options" '^--agent$' "$longs"

expect_eq "'coil -<TAB>' is every option --help lists" "$longs" \
	"$(offers -)"
expect_eq "'coil --sand<TAB>' is the options so named" \
	"$(printf '%s\n' "$longs" | grep '^--sand')" "$(offers --sand)"
expect_eq "'coil <TAB>': no operands to offer" "" "$(offers '')"

# values OPTION: the words completion/coil gives OPTION.
values() {
	bash --norc --noprofile -c '. "$1"; _coil_values "$2"' values \
		"$comp" "$1" | tr ' ' '\n' | sed '/^$/d' | sort
}

while read -r opt arg; do
	[ -n "$arg" ] || continue
	words=$(values "$opt")
	if [ -n "$words" ]; then
		expect_eq "'coil $opt <TAB>' offers its words" "$words" \
			"$(offers "$opt" '')"
		first=$(printf '%s\n' "$words" | head -n 1)
		expect_eq "'coil $opt=${first%?}<TAB>' completes the word" \
			"$first" "$(offers "$opt" = "${first%?}" | grep -x "$first")"
		# Each word is one $COIL takes: --version after it exits 0
		# once the option parsed.
		bad=""
		for w in $words; do
			"$COIL" "$opt" "$w" --version >/dev/null 2>"$T/err" ||
				bad="$bad $w: $(cat "$T/err")"
		done
		expect_eq "$opt: $COIL takes each word" "" "$bad"
		# A word it does not take: if its error names the words
		# (the last parenthesised list but the "try"), they are ours.
		if "$COIL" "$opt" no-such-word --version >/dev/null 2>"$T/err"
		then
			ok "$opt: '$COIL' checks the word later, at use # its error names no list here"
		else
			said=$(sed -E 's/ \(try .*//; s/.*\(([^()]*)\)$/\1/' \
				"$T/err" | sed -E 's/,? or /, /g' |
				tr ',' '\n' | sed 's/^ *//; /^$/d' | sort)
			expect_eq "$opt: the words its error names" "$words" \
				"$said"
		fi
		continue
	fi
	case $arg in
	DIR)
		expect_eq "'coil $opt <TAB>' offers directories" \
			"$(printf 'adir\nbdir')" "$(offers "$opt" '')"
		expect_eq "'coil $opt a<TAB>' offers the directory" \
			"adir" "$(offers "$opt" a)" ;;
	FILE | FILE[0-9] | PATH)
		expect_eq "'coil $opt <TAB>' offers files and directories" \
			"$(printf 'adir\nafile\nbdir\nbfile.transcript')" \
			"$(offers "$opt" '')"
		expect_eq "'coil $opt=bf<TAB>' offers the file" \
			"bfile.transcript" "$(offers "$opt" = bf)" ;;
	*)
		case $free in
		*" $arg "*)
			expect_eq "'coil $opt <TAB>' ($arg, free text): nothing" \
				"" "$(offers "$opt" '')" ;;
		*)
			not_ok "$opt $arg: a placeholder completion/coil does not know" \
				"add the option's words to _coil_values, or $arg to the free list here" ;;
		esac ;;
	esac
done <<EOF
$options
EOF

# A word list for an option this coil lacks is fine (another build's),
# but one for no option at all is a typo: each is an option somewhere.
for opt in $(sed -nE 's/^\t(--[a-z0-9-]+)\) echo.*/\1/p' "$comp"); do
	case $(printf '%s\n' "$longs" | grep -cx -- "$opt") in
	1) ok "_coil_values $opt: an option of this coil" ;;
	*) skip "_coil_values $opt: an option of this coil" "this coil has no $opt" ;;
	esac
done

done_testing
