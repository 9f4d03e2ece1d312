"""Shell completion for `odh` and `odh-training`: bash and zsh scripts made from the
parsers themselves, so every verb and flag is offered as `--help` documents it.

    source <(odh completion bash)          # ~/.bashrc
    source <(odh completion zsh)           # ~/.zshrc (uses bash completion emulation)

Job names are completed from the cluster (`odh training list -o name`-like call), with
the current kubeconfig, quietly giving nothing when it cannot answer.
"""

from __future__ import annotations

from odh.training.cli.parsing import TYPE_WORDS, VERBS, verb_parser


def _flags(verb: str) -> list[str]:
    parser = verb_parser(verb, "odh training")
    found = []
    for action in parser._actions:  # argparse offers no public way to list them
        if action.help == "==SUPPRESS==":
            continue
        found += [o for o in action.option_strings if o.startswith("--")]
    return sorted(set(found))


def script(shell: str) -> str:
    cases = "\n".join(f'        {verb}) flags="{" ".join(_flags(verb))}" ;;' for verb in VERBS)
    types = " ".join(sorted(t for t in TYPE_WORDS if not t.endswith("s")))
    from odh.training.cli.login import login_parser
    login_flags = " ".join(sorted(o for a in login_parser()._actions
                                  for o in a.option_strings if o.startswith("--")))
    bash = f'''# odh / odh-training completion ({shell})
_odh_training_complete() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" verb="" i start=1 flags=""
    if [[ "${{COMP_WORDS[0]}}" == odh ]]; then
        if (( COMP_CWORD == 1 )); then
            COMPREPLY=( $(compgen -W "training login completion" -- "$cur") ); return
        fi
        [[ "${{COMP_WORDS[1]}}" == completion ]] && {{
            COMPREPLY=( $(compgen -W "bash zsh" -- "$cur") ); return; }}
        [[ "${{COMP_WORDS[1]}}" == login ]] && {{
            COMPREPLY=( $(compgen -W "{login_flags}" -- "$cur") ); return; }}
        start=2
    fi
    if (( COMP_CWORD == start )); then
        COMPREPLY=( $(compgen -W "{" ".join(VERBS)}" -- "$cur") ); return
    fi
    verb="${{COMP_WORDS[start]}}"
    case "$verb" in
{cases}
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=( $(compgen -W "$flags" -- "$cur") ); return
    fi
    if (( COMP_CWORD == start + 1 )); then
        COMPREPLY=( $(compgen -W "{types}" -- "$cur") ); return
    fi
    local names
    names=$("${{COMP_WORDS[0]}}" $( [[ "${{COMP_WORDS[0]}}" == odh ]] && echo training ) \\
        list "${{COMP_WORDS[start+1]}}" -o json 2>/dev/null \\
        | sed -n 's/^ *"name": "\\(.*\\)",$/\\1/p')
    COMPREPLY=( $(compgen -W "$names" -- "$cur") )
}}
complete -F _odh_training_complete odh odh-training
'''
    if shell == "zsh":
        return "autoload -U +X bashcompinit && bashcompinit\n" + bash
    return bash
