# hogtrain-completion.bash: bash completion for hogtrain: its commands, each command's options as its own --help lists them (so they never drift), the words some options take, and file names.
# SPDX-License-Identifier: BSD-2-Clause
# Installed by make install as share/bash-completion/completions/hogtrain;
# by hand: . tools/hogtrain-completion.bash

_hogtrain()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local commands="convert train tune predict info export keygen version help"
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        return
    fi
    local cmd=${COMP_WORDS[1]} mf= w
    for w in "${COMP_WORDS[@]}"; do
        [ "$w" = mf ] && mf="--model mf"
    done
    if [ "$cmd" = help ]; then
        COMPREPLY=($(compgen -W "convert train tune predict info export keygen" -- "$cur"))
        return
    fi
    case $cur in
    -*)
        local opts
        opts=$("${COMP_WORDS[0]}" "$cmd" $mf --help 2>/dev/null | grep -oE -- '--[a-zA-Z][a-zA-Z0-9_-]*' | sort -u)
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
        ;;
    esac
    local words=
    case $prev in
    --loss | --loss_function) words="logistic hinge modified_huber squared quantile softmax" ;;
    --schedule) words="constant decay invscaling adagrad"
        [ -n "$mf" ] && words="adagrad decay" ;;
    --format) words="csv libsvm vw ffm hgd" ;;
    --kernel) words="auto sparse dense" ;;
    --replicas) words="machine node core" ;;
    --on-error) words="stop skip" ;;
    --index-base | --bind) words="auto 0 1" ;;
    --model) words="mf" ;;
    --sync) words="async average" ;;
    --mf-schedule) words="grid hogwild" ;;
    esac
    if [ -n "$words" ]; then
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -o filenames -o bashdefault -F _hogtrain hogtrain
