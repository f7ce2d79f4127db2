# bash completion for python-sb and python3-sb                -*- shell-script -*-
#
# Installed as $(datadir)/bash-completion/completions/python-sb (and
# python3-sb).  Completes python-sb's options, CPython's options and the
# common sandbox rules (--key=value) before the command part; after it
# (-c CMD, -m MOD, a script or -) only files, since the rest is the
# program's.  Works with or without the bash-completion helpers.

# PIDs of running Python processes, by command name or by executable.
_python_sb_pids()
{
    local d pid comm exe
    for d in /proc/[0-9]*; do
        pid=${d#/proc/}
        comm=
        read -r comm 2>/dev/null <"$d/comm"
        exe=$(readlink "$d/exe" 2>/dev/null)
        exe=${exe##*/}
        case $comm:$exe in
            python*:* | pypy*:* | ipython*:* | *:python* | *:pypy*) printf '%s\n' "$pid" ;;
        esac
    done
}

# Top-level importable modules of the interpreter python-sb would run.
_python_sb_modules()
{
    local py=${1:-python3}
    "$py" -c 'import pkgutil, sys
print("\n".join(sorted({m.name for m in pkgutil.iter_modules()} | set(sys.builtin_module_names))))' 2>/dev/null
}

_python_sb_files()
{
    local IFS=$'\n'
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -f -- "$1"))
}

_python_sb()
{
    local cur prev i w python=python3 attach=
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()

    # "--opt=value": bash splits at '=' (COMP_WORDBREAKS), so the words are
    # "--opt" "=" "value"; glued is set when completing such a value.
    local glued=
    if [[ $cur == = ]]; then
        cur= glued=1
    elif [[ $prev == = && COMP_CWORD -ge 2 ]]; then
        prev=${COMP_WORDS[COMP_CWORD - 2]} glued=1
    fi

    # "-Im" and "-Ic" end in -m and -c.
    if [[ $prev == -[!-]* && $prev != *[WX]* ]]; then
        case $prev in
            *m) prev=-m ;;
            *c) prev=-c ;;
        esac
    fi

    # Find the command part: once it started, everything is the program's.
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        case $w in
            --python) python=${COMP_WORDS[i + 1]} ;;
            --attach) attach=1 ;;
            -c | -m | -- | -)
                ((i + 1 < COMP_CWORD)) && { _python_sb_files "$cur"; return; }
                ;;
            -[!-]*[cm]*)
                # -Im mod, -mjson.tool, -IBc code: a command inside a cluster
                local cl=${w#-}
                cl=${cl%%[WX]*}
                if [[ $cl == *[cm]* ]]; then
                    [[ $cl == *[cm] ]] && ((i + 1 >= COMP_CWORD)) && break
                    _python_sb_files "$cur"
                    return
                fi
                ;;
            -* | =) ;;
            *)
                # A value of the option before it, or the script.
                case ${COMP_WORDS[i - 1]} in
                    -W | -X | --check-hash-based-pycs | --pysandboxes-config | --log | --report | \
                        --python | --attach | --stack | --policy | --duration | --diff | = ) ;;
                    *)
                        if [[ ${COMP_WORDS[i - 2]} != --diff ]] &&
                            ! [[ $attach && ${COMP_WORDS[i - 1]} == --learn ]]; then
                            _python_sb_files "$cur"
                            return
                        fi
                        ;;
                esac
                ;;
        esac
    done

    case $prev in
        --pysandboxes-config | --log | --report | --policy | --diff | --learn)
            if [[ $prev != --learn || $glued || $attach ]]; then
                _python_sb_files "$cur"
                return
            fi
            ;;
        --python)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -c -- "$cur"))
            return
            ;;
        --attach | --stack)
            COMPREPLY=($(compgen -W "$(_python_sb_pids)" -- "${cur##*,}"))
            [[ $cur == *,* ]] && COMPREPLY=("${COMPREPLY[@]/#/${cur%,*},}")
            return
            ;;
        --duration)
            return
            ;;
        --check-hash-based-pycs)
            COMPREPLY=($(compgen -W 'default always never' -- "$cur"))
            return
            ;;
        -W)
            COMPREPLY=($(compgen -W 'default error ignore always module once' -- "$cur"))
            return
            ;;
        -X)
            COMPREPLY=($(compgen -W 'dev utf8 utf8=0 importtime faulthandler tracemalloc
                frozen_modules=on frozen_modules=off int_max_str_digits= warn_default_encoding
                no_debug_ranges pycache_prefix= showrefcount' -- "$cur"))
            return
            ;;
        -m)
            COMPREPLY=($(compgen -W "$(_python_sb_modules "$python")" -- "$cur"))
            return
            ;;
        -c)
            return
            ;;
        --os-sandbox)
            [[ $glued ]] && { COMPREPLY=($(compgen -W 'auto none subprocess landlock unshare bwrap firejail' -- "$cur")); return; }
            ;;
        --py-sandbox)
            [[ $glued ]] && { COMPREPLY=($(compgen -W 'true false' -- "$cur")); return; }
            ;;
        --expose-ro | --expose-rw)
            if [[ $glued ]]; then
                compopt -o filenames 2>/dev/null
                COMPREPLY=($(compgen -d -- "$cur"))
                return
            fi
            ;;
    esac

    case $cur in
        --*)
            local opts='--help --help-env --help-xoptions --help-all --version
                --check-hash-based-pycs --pysandboxes-config= --learn --learn= --log= --audit
                --fail-on-violation --report= --python= --check-config --diff --best-effort
                --sb-verbose --attach --stack --native --policy --enforce --duration
                --env= --unenv= --expose-ro= --expose-rw= --ignore= --net= --python-import=
                --python-api= --os-sandbox= --py-sandbox= --port= --exec=
                --limit-nproc= --limit-as= --limit-nofile= --limit-fsize= --limit-cpu=
                --eval-timeout= --eval-namespace= --eval-syntax= --eval-call= --eval-import='
            COMPREPLY=($(compgen -W "$opts" -- "$cur"))
            [[ ${COMPREPLY[*]} == *= ]] && compopt -o nospace 2>/dev/null
            ;;
        -*)
            COMPREPLY=($(compgen -W '-h -? -V -b -B -c -d -E -i -I -m -O -OO -P -q -R -s -S -u
                -v -W -x -X -' -- "$cur"))
            ;;
        *)
            _python_sb_files "$cur"
            ;;
    esac
}

complete -F _python_sb python-sb python3-sb
