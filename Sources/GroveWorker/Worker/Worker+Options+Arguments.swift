extension Worker.Options {
    /// These options as a worker's command line (without the program's name), in the order
    /// `fsm-launch` passes them: what ``init(arguments:)`` reads back as equal options. Only
    /// what was given is written (a data directory left to the standard one stays unwritten).
    ///
    /// `fsm-launch` builds every worker's argv from this, so that the command line is written
    /// by the type that reads it; a group's own `arguments` follow it.
    public var arguments: [String] {
        var arguments: [String] = []
        if let nameArgument { arguments += Self.option("--name", nameArgument) }
        if let coordinatorArgument { arguments += Self.option("--coordinator", coordinatorArgument) }
        if exitWithParent { arguments.append("--exit-with-parent") }
        if let parentPid { arguments += Self.option("--parent-pid", String(parentPid)) }
        if let dataDirectoryArgument { arguments += Self.option("--data-dir", dataDirectoryArgument) }
        if let auditDirectoryArgument { arguments += Self.option("--audit-dir", auditDirectoryArgument) }
        if let keyFile { arguments += Self.option("--key-file", keyFile) }
        if let coordinatorKey { arguments += Self.option("--coordinator-key", coordinatorKey) }
        if let storePasswordFile { arguments += Self.option("--store-password-file", storePasswordFile) }
        if let direct { arguments += Self.option("--direct", direct) }
        if let describe { arguments += Self.option("--describe", describe) }
        if describeMachines { arguments.append("--describe-machines") }
        if let describeLimit { arguments += Self.option("--describe-limit", String(describeLimit)) }
        return arguments
    }

    /// `--option value`, or `--option=value` for a value that would read as an option itself
    /// (a Z85 key may start with `-`); `-` alone is a value (`--key-file -`: standard input).
    private static func option(_ name: String, _ value: String) -> [String] {
        value.hasPrefix("-") && value != "-" ? [name + "=" + value] : [name, value]
    }
}
