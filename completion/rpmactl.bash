# rpmactl.bash -- bash completion for rpmactl(8): options, commands, socket
# paths, and for `rpmactl evict` the pids of rpmad's clients (asked from the
# rpmad the command line names, quietly; nothing when it cannot be asked).
# Installed as bash-completion/completions/rpmactl; works without the
# bash-completion package too (source it).

_rpmactl_clients()
{
	# PID, UID, USER, COMMAND are the first columns of `rpmactl clients`
	# (after a header, up to the blank line before the table of users);
	# rpmactl itself, asking, is no one to evict
	"$1" "${@:2}" --timeout 2 clients 2>/dev/null |
		awk 'NF == 0 { exit }
			NR > 1 && $1 ~ /^[0-9]+$/ && $4 != "rpmactl" { print $1 }'
}

_rpmactl()
{
	local cur=${COMP_WORDS[COMP_CWORD]}
	local prev=${COMP_WORDS[COMP_CWORD-1]}
	local commands="status clients connections mrs endpoints stats metrics evict upgrade"
	local options="--socket --json --timeout --help --version"
	local i word command="" socket=()
	COMPREPLY=()

	# the command, and a --socket given before it
	for ((i = 1; i < COMP_CWORD; i++)); do
		word=${COMP_WORDS[i]}
		case $word in
		-s|--socket)
			socket=(--socket "${COMP_WORDS[i+1]}")
			((i++));;
		--socket=*)
			socket=(--socket "${word#--socket=}");;
		-t|--timeout|--page-size)
			((i++));;
		-*)
			;;
		*)
			command=$word
			break;;
		esac
	done

	if [ -z "$command" ]; then
		case $prev in
		-s|--socket)
			# sockets live in directories: offer both
			compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			return;;
		-t|--timeout)
			return;;
		esac
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
		fi
		return
	fi

	# only evict takes an argument: a client's pid
	if [ "$command" = evict ] && [ "$i" -eq $((COMP_CWORD - 1)) ]; then
		local pids
		pids=$(_rpmactl_clients "${COMP_WORDS[0]}" "${socket[@]}")
		mapfile -t COMPREPLY < <(compgen -W "$pids" -- "$cur")
	fi
}

complete -F _rpmactl rpmactl
