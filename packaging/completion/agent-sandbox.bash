# bash completion for agent-sandbox, sandbox-run and agent-sandbox-unsafe (installed once per name).
# After "--" the rest of the line is the agent's command: complete it as a command line.

_agent_sandbox() {
  local cur prev words cword
  _init_completion || return
  local i
  for ((i = 1; i < cword; i++)); do
    if [[ ${words[i]} == -- ]]; then
      _command_offset $((i + 1))
      return
    fi
  done
  local cmd=${words[0]##*/}
  if [[ $cmd == agent-sandbox-unsafe ]]; then
    [[ $cword -eq 1 ]] && COMPREPLY=($(compgen -W '-- --help --version' -- "$cur"))
    [[ $cur != -* ]] && _command_offset 1
    return
  fi
  case $prev in
    --workspace|--git-mirror) _filedir -d; return ;;
    --status-file|--ledger|--capture-log|--credential|--registry) _filedir; return ;;
    --isolation) COMPREPLY=($(compgen -W 'runc gvisor' -- "$cur")); return ;;
    --runtime) COMPREPLY=($(compgen -W 'codex claude cursor-agent' -- "$cur")); return ;;
    --network) COMPREPLY=($(compgen -W 'none slirp4netns ns: container:' -- "$cur")); compopt -o nospace; return ;;
    --id|--image|--memory|--pids|--cpus|--cpu-shares|--timeout|--account|--host|--slots) return ;;
  esac
  local opts='--id --image --workspace --git-mirror --memory --pids --cpus --cpu-shares --timeout --network --isolation --runtime
    --account --credential --tty --persist --dry-run --status-file --ledger --capture-log --help --version --'
  if [[ $cmd == sandbox-run ]]; then opts+=' --slots --capture-stdout'; else opts+=' --registry --host'; fi
  case ${words[1]:-} in
    doctor) [[ $cmd == sandbox-run ]] && opts='--json' || opts='--json --registry'
      COMPREPLY=($(compgen -W "$opts" -- "$cur")); return ;;
    gc|exit-codes) COMPREPLY=($(compgen -W '--json' -- "$cur")); return ;;
    pool) COMPREPLY=($(compgen -W 'fill' -- "$cur")); return ;;
    ps) [[ $cmd == sandbox-run ]] && opts='--json' || opts='--json --registry --host'
      COMPREPLY=($(compgen -W "$opts" -- "$cur")); return ;;
    attach|stop) [[ $cmd == sandbox-run ]] && opts='' || opts='--registry --host'
      COMPREPLY=($(compgen -W "$opts" -- "$cur")); return ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [[ $cword -eq 1 ]]; then
    COMPREPLY=($(compgen -W 'doctor gc pool ps attach stop exit-codes kube seccomp-profile' -- "$cur"))
  fi
}
complete -F _agent_sandbox agent-sandbox sandbox-run agent-sandbox-unsafe
