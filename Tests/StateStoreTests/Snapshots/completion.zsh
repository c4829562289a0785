#compdef statectl

__statectl_complete() {
    local -ar non_empty_completions=("${@:#(|:*)}")
    local -ar empty_completions=("${(M)@:#(|:*)}")
    _describe -V '' non_empty_completions -- empty_completions -P $'\'\''
}

__statectl_custom_complete() {
    local -a completions
    completions=("${(@f)"$("${command_name}" "${@}" "${command_line[@]}")"}")
    if [[ "${#completions[@]}" -gt 1 ]]; then
        __statectl_complete "${completions[@]:0:-1}"
    fi
}

__statectl_cursor_index_in_current_word() {
    if [[ -z "${QIPREFIX}${IPREFIX}${PREFIX}" ]]; then
        printf 0
    else
        printf %s "${#${(z)LBUFFER}[-1]}"
    fi
}

_statectl() {
    emulate -RL zsh -G
    setopt extendedglob nullglob numericglobsort
    unsetopt aliases banghist

    local -xr SAP_SHELL=zsh
    local -x SAP_SHELL_VERSION
    SAP_SHELL_VERSION="$(builtin emulate zsh -c 'printf %s "${ZSH_VERSION}"')"
    local -r SAP_SHELL_VERSION

    local context state state_descr line
    local -A opt_args

    local -r command_name="${words[1]}"
    local -ar command_line=("${words[@]}")
    local -ir current_word_index="$((CURRENT - 1))"

    local -i ret=1
    local -ar arg_specs=(
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'migrate:Create the database if needed and apply pending schema migrations.'
            'recover:Move a damaged database aside and start a fresh one holding every state that can still be read.'
            'check:Check the database'\''s integrity, schema version, checksums and quarantine.'
            'inspect:Show the stored states, one state, pressure events, quarantine or the hierarchy.'
            'export:Write every stored state as one JSON document.'
            'import:Import the states of an export document, all in one transaction.'
            'prune:Remove states not updated for a while, or the states at and below a path.'
            'rekey:Seal every state with a new key, or make every state clear, in one transaction.'
            'monitor:Print memory samples: host and cgroup memory, PSI, effective available and level.'
            'demo:Run a small mail app twice on a database and show what it saved and restored.'
            'soak:Run controllers under real memory pressure and check that nothing is lost.'
            'help:Show subcommand help information.'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        migrate|recover|check|inspect|export|import|prune|rekey|monitor|demo|soak|help)
            "_statectl_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_statectl_migrate() {
    local -i ret=1
    local -ar arg_specs=(
        '--db[The state database file. Default\: $STATESTORE_DB, else the "statestore-demo" app'\''s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).]:path:_files'
        '--json[Print a JSON document (stable schema, see `statectl --help`) instead of text.]'
        '--dry-run[List the pending migrations without applying them.]'
        '--repair[Re-record the schema version of a database whose tables match this build'\''s schema exactly but whose version records were erased.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_statectl_recover() {
    local -i ret=1
    local -ar arg_specs=(
        '--db[The state database file. Default\: $STATESTORE_DB, else the "statestore-demo" app'\''s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).]:path:_files'
        '--max-state-size[The largest state accepted, as the application'\''s StateStore.Options.maximumStateSize (default 1MiB).]:size:'
        '--json[Print a JSON document (stable schema, see `statectl --help`) instead of text.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_statectl_check() {
    local -i ret=1
    local -ar arg_specs=(
        '--db[The state database file. Default\: $STATESTORE_DB, else the "statestore-demo" app'\''s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).]:path:_files'
        '--json[Print a JSON document (stable schema, see `statectl --help`) instead of text.]'
        '--key-file[Open sealed states with the key in this file (mode 600 or 400, owned by you).]:path:_files'
        '--credential[Open sealed states with the systemd credential NAME ($CREDENTIALS_DIRECTORY/NAME).]:name:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_statectl_inspect() {
    local -i ret=1
    local -ar arg_specs=(
        '--db[The state database file. Default\: $STATESTORE_DB, else the "statestore-demo" app'\''s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).]:path:_files'
        '--json[Print a JSON document (stable schema, see `statectl --help`) instead of text.]'
        '--key-file[Open sealed states with the key in this file (mode 600 or 400, owned by you).]:path:_files'
        '--credential[Open sealed states with the systemd credential NAME ($CREDENTIALS_DIRECTORY/NAME).]:name:'
        ':path:'
        '--list[Always list the states at and below PATH as a table, even when a state is stored at PATH.]'
        '--events[Show the memory-pressure events the application handled, newest first.]'
        '--limit[How many pressure events --events shows.]:limit:'
        '--quarantine[Show the quarantined states and why they were quarantined, newest first.]'
        '--hierarchy[Show the saved window hierarchy archive.]'
        '--scene[The window scene whose hierarchy --hierarchy shows.]:scene:'
        '--set-aside[With --hierarchy\: the archive the crash-loop guard set aside instead of the live one.]'
        '--scenes[Show the window scenes and which live process holds each.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_statectl_export() {
    local -i ret=1
    local -ar arg_specs=(
        '--db[The state database file. Default\: $STATESTORE_DB, else the "statestore-demo" app'\''s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).]:path:_files'
        '(--output -o)'{--output,-o}'[Write the document to this file instead of stdout.]:file:_files'
        '--max-state-size[The largest state accepted, as the application'\''s StateStore.Options.maximumStateSize (default 1MiB).]:size:'
        '--key-file[Open sealed states with the key in this file (mode 600 or 400, owned by you).]:path:_files'
        '--credential[Open sealed states with the systemd credential NAME ($CREDENTIALS_DIRECTORY/NAME).]:name:'
        '--clear[Write sealed states clear, opened with the key given (--key-file or --credential).]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_statectl_import() {
    local -i ret=1
    local -ar arg_specs=(
        '--db[The state database file. Default\: $STATESTORE_DB, else the "statestore-demo" app'\''s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).]:path:_files'
        '--json[Print a JSON document (stable schema, see `statectl --help`) instead of text.]'
        ':file:_files'
        '--replace[Also remove stored states whose paths are not in the document.]'
        '--max-state-size[The largest state accepted, as the application'\''s StateStore.Options.maximumStateSize (default 1MiB).]:size:'
        '--key-file[Open sealed states with the key in this file (mode 600 or 400, owned by you).]:path:_files'
        '--credential[Open sealed states with the systemd credential NAME ($CREDENTIALS_DIRECTORY/NAME).]:name:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_statectl_prune() {
    local -i ret=1
    local -ar arg_specs=(
        '--db[The state database file. Default\: $STATESTORE_DB, else the "statestore-demo" app'\''s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).]:path:_files'
        '--json[Print a JSON document (stable schema, see `statectl --help`) instead of text.]'
        '--older-than[Remove states last updated longer ago than this (30d, 12h, 90m, 45s).]:duration:'
        '--path[Remove the state at this path and every state below it.]:prefix:'
        '--invalid-paths[Remove the rows whose path is not a valid restoration path (as `statectl inspect` lists them).]'
        '--quarantine[Remove quarantined rows (by --older-than, when they were quarantined, or --path) instead of states.]'
        '--dry-run[Print what would be removed without removing it.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_statectl_rekey() {
    local -i ret=1
    local -ar arg_specs=(
        '--db[The state database file. Default\: $STATESTORE_DB, else the "statestore-demo" app'\''s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).]:path:_files'
        '--json[Print a JSON document (stable schema, see `statectl --help`) instead of text.]'
        '--key-file[Open sealed states with the key in this file (mode 600 or 400, owned by you).]:path:_files'
        '--credential[Open sealed states with the systemd credential NAME ($CREDENTIALS_DIRECTORY/NAME).]:name:'
        '--new-key-file[Seal every state with the key in this file (mode 600 or 400, owned by you).]:path:_files'
        '--new-credential[Seal every state with the systemd credential NAME.]:name:'
        '--clear[Make every state clear\: unseal the database.]'
        '--max-state-size[The largest state accepted, as the application'\''s StateStore.Options.maximumStateSize (default 1MiB).]:size:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_statectl_monitor() {
    local -i ret=1
    local -ar arg_specs=(
        '--once[Print one sample and exit.]'
        '--interval[Time between samples\: 1s, 500ms, 2m. (default\: 1s)]:duration:'
        '--count[Stop after this many samples.]:count:'
        '--root[A directory standing in for / (a fixture tree).]:dir:_files -/'
        '--cgroup[A cgroup directory, relative to the root, to watch instead of the process'\''s own.]:path:'
        '--events[Run the monitor (PSI triggers, adaptive polling) and print its events, not samples.]'
        '--json[Print a JSON document (stable schema, see `statectl --help`) instead of text.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_statectl_demo() {
    local -i ret=1
    local -ar arg_specs=(
        '--db[The state database file. Default\: $STATESTORE_DB, else the "statestore-demo" app'\''s default path ($XDG_STATE_HOME/statestore-demo/state.sqlite or ~/.local/state/statestore-demo/state.sqlite).]:path:_files'
        '--json[Print a JSON document (stable schema, see `statectl --help`) instead of text.]'
        '--key-file[Open sealed states with the key in this file (mode 600 or 400, owned by you).]:path:_files'
        '--credential[Open sealed states with the systemd credential NAME ($CREDENTIALS_DIRECTORY/NAME).]:name:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_statectl_soak() {
    local -i ret=1
    local -ar ___pressure=('cgroup' 'synthetic' 'none')
    local -ar ___ballast=('auto' 'worker' 'stress-ng')
    local -ar arg_specs=(
        '--duration[How long to run\: 90, 90s, 15m, 2h. (default\: 60s)]:duration:'
        '--controllers[How many distinct controllers the traffic cycles through.]:controllers:'
        '--db[The database to use (kept). Default\: a fresh one in a temporary folder, removed afterwards.]:path:'
        '--pressure[cgroup, synthetic or none. Default\: cgroup when running as root with a writable memory cgroup, else synthetic.]:pressure:{__statectl_complete "${___pressure[@]}"}'
        '--memory-limit[The harness'\''s memory (cgroup limit, or the synthetic total). (default\: 256MiB)]:bytes:'
        '--ballast[What makes the waves in cgroup mode\: auto, worker or stress-ng. Default (auto)\: statestore-worker when it is beside statectl, else stress-ng when installed.]:ballast:{__statectl_complete "${___ballast[@]}"}'
        '--seed[Seed of the traffic\: the same seed replays the same operations.]:seed:'
        '--report[Write an SVG timeline of the run to this file.]:file.svg:'
        '--json[Print the summary as a JSON document.]'
        '--quiet[No progress line and no text summary (invariants that broke still go to stderr).]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_statectl_help() {
    local -i ret=1
    local -ar arg_specs=(
        '*:subcommands:'
        '--version[Show the version.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

if [[ "${funcstack[1]}" = _statectl ]]; then
    _statectl "${@}"
else
    compdef _statectl statectl
fi
