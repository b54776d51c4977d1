import ArgumentParser
import Foundation
import GroveClient
import GroveCluster
import GroveOTel
import Logging
import GroveWire

@main
struct FSMSend: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fsm-send",
        abstract: "Sends events to machines of a running topology, reads and watches them.",
        discussion: """
            fsm-send <address> <event> sends an event and prints the state it committed as one line of \
            JSON. The event is JSON as Swift's Codable encodes the machine's Event, e.g. \
            '{"updateEmail":{"_0":"ada@example.com"}}'; a bare case name such as login is short for \
            '{"login":{}}'. An address is a machine name, or name/key for a keyed machine.

            The endpoint comes from --endpoint, else FSM_ENDPOINT, else the default topology's: the socket \
            clients in the default topology's directory under this user's runtime directory \
            ($GROVE_RUNTIME_DIR, else $XDG_RUNTIME_DIR/grove, else /tmp/grove-<uid>; the same rule \
            fsm-launch binds by, so run both as the same user). It is ipc://PATH or tcp://HOST:PORT. \
            Before connecting to a socket file, fsm-send checks that only this user or root could have \
            made it (its directory and those above it are theirs and writable by nobody else, the \
            socket is this user's); it refuses an abstract socket (ipc://@NAME), which anyone on the \
            host could have bound, unless CURVE keys prove the coordinator. While the machine's \
            worker is starting or restarting (an `unavailable` reply), the request is sent again, \
            50 ms apart doubling to 500 ms, until --timeout has passed. An event carries an idempotency \
            key (a random client id and a sequence) and is also sent again with the same key when \
            answered worker-lost or not answered within --timeout, up to --attempts sends: the worker \
            answers a key it applied already with its first answer, so the event applies once. \
            --no-retry sends events without a key, as an older fsm-send did.

            --route direct (or FSM_ROUTE=direct) sends events, get, stop, restart and cancel straight \
            to the worker that runs the machine, located through the coordinator (fsm-send locate \
            shows where), when its group sets "direct": true in the topology; other machines and \
            commands go through the coordinator.

            A coordinator that speaks CURVE (a topology with security.coordinatorKey) needs --key-file \
            (this client's NAME.key_secret) and --coordinator-key (the coordinator's .key), or \
            GROVE_KEY_FILE and GROVE_COORDINATOR_KEY.

            \(SendExitStatus.summary)
            """,
        subcommands: [Send.self, State.self, Watch.self, Cancel.self, Stop.self, Restart.self, List.self, Locate.self, DeadLetters.self,
                      Suspensions.self, Quarantines.self, View.self, MetricsToken.self],
        defaultSubcommand: Send.self
    )

    /// Options written before a subcommand's name (`fsm-send --endpoint E list`) belong to that
    /// subcommand; without this, the default subcommand would read `list` as a machine address.
    static func main() {
        let arguments = Self.movingLeadingOptions(Array(CommandLine.arguments.dropFirst()))
        guard TraceExport.isRequested() else { return main(arguments) }
        // Traced (docs/ARCHITECTURE.md, "Traces"): the spans are exported before the process
        // ends, whichever way it ends.
        let traces: TraceExport?
        do {
            traces = try TraceExport.start(process: "fsm-send", log: Logger(label: "grove.send"))
        } catch {
            FileHandle.standardError.write(Data("error: traces: \(error); fix or unset the OTEL_EXPORTER_OTLP_* variables\n".utf8))
            Foundation.exit(1)
        }
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch {
            traces?.finishBlocking()
            exit(withError: error)
        }
        traces?.finishBlocking()
    }

    static func movingLeadingOptions(_ arguments: [String]) -> [String] {
        let subcommands: Set = ["send", "state", "watch", "cancel", "stop", "restart", "list", "locate", "dead-letters", "suspensions",
                                "quarantines", "view", "help"]
        let takesValue: Set = ["--endpoint", "--timeout", "--events", "--duration", "--count", "--key-file", "--coordinator-key", "--route",
                                "--attempts"]
        var index = 0
        while index < arguments.count, arguments[index].hasPrefix("-") {
            index += takesValue.contains(arguments[index]) ? 2 : 1
        }
        guard index > 0, index < arguments.count, subcommands.contains(arguments[index]) else { return arguments }
        return [arguments[index]] + arguments[..<index] + arguments[(index + 1)...]
    }
}

struct Connection: ParsableArguments {
    @Option(help: "The coordinator's clients endpoint, ipc://PATH or tcp://HOST:PORT. Default: $FSM_ENDPOINT, else the default topology's in this user's runtime directory.")
    var endpoint: String?

    // Unconditional: `--timeout -1` is a value (refused by validate()), not a missing one.
    @Option(parsing: .unconditional, help: "Seconds to wait for a reply, retrying while the machine's worker is unavailable: above 0, at most 1000000.")
    var timeout: Double = 5

    @Option(help: ArgumentHelp("This client's secret key file (NAME.key_secret from fsm-keys new), for a coordinator that speaks CURVE. Default: $\(Credentials.keyFileVariable).", valueName: "file"))
    var keyFile: String?

    // Unconditional: a Z85 key may start with `-`, which would otherwise read as an option.
    @Option(parsing: .unconditional, help: ArgumentHelp("The coordinator's public key: its .key file or the 40 Z85 characters. Default: $\(Credentials.coordinatorKeyVariable).", valueName: "key"))
    var coordinatorKey: String?

    @Option(help: ArgumentHelp("How many times an event may be sent in all: it carries an idempotency key, and is sent again with "
        + "the same key when answered worker-lost or unavailable or not answered within --timeout, so it applies once (1 to 100).",
        valueName: "n"))
    var attempts = 5

    @Flag(help: "Send an event once, without an idempotency key (as an older fsm-send did): worker-lost and timeouts are not retried.")
    var noRetry = false

    @Option(help: ArgumentHelp("The road requests to machines take: coordinator (through the coordinator), or direct (straight to "
        + "the worker that runs the machine, located through the coordinator; docs/DIRECT-ROUTES.md). Default: $FSM_ROUTE, else coordinator.",
        valueName: "road"))
    var route: String?

    func validate() throws {
        guard (1...100).contains(attempts) else {
            throw ValidationError("--attempts must be from 1 to 100, e.g. --attempts 5; got \(attempts)")
        }
        // Bounded: Duration.seconds traps on a value as large as 1e300.
        _ = try resolvedRoute
        guard timeout > 0, timeout <= 1_000_000 else {
            throw ValidationError("--timeout must be a number of seconds above 0 and at most 1000000, e.g. --timeout 0.5; got \(timeout)")
        }
    }

    var resolvedRoute: Client.Route {
        get throws {
            let name = route ?? ProcessInfo.processInfo.environment["FSM_ROUTE"] ?? Client.Route.coordinator.rawValue
            guard let road = Client.Route(rawValue: name) else {
                throw ValidationError("--route (or FSM_ROUTE) must be coordinator or direct; got '\(name)'")
            }
            return road
        }
    }

    var resolvedEndpoint: String {
        endpoint ?? ProcessInfo.processInfo.environment["FSM_ENDPOINT"] ?? Client.defaultEndpoint
    }

    func credentials() throws -> Credentials? {
        try reporting { try Credentials.resolve(keyFile: keyFile, coordinatorKey: coordinatorKey) }
    }

    func client() throws -> Client {
        let credentials = try credentials()
        let road = try resolvedRoute
        return try reporting {
            try Client(endpoint: resolvedEndpoint, timeout: .seconds(timeout), retryUnavailable: true, keyedAttempts: noRetry ? 1 : attempts,
                       credentials: credentials, route: road)
        }
    }
}

/// Runs `body`, turning a ``WireError`` into a message on stderr and the documented exit status.
func reporting<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as WireError {
        throw report(error)
    }
}

/// Writes `error` to stderr and returns the exit status the discussion documents for it.
func report(_ error: WireError) -> ExitCode {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    return ExitCode(SendExitStatus(error.code).rawValue)
}

func printLine(_ bytes: [UInt8]) {
    print(String(decoding: bytes, as: UTF8.self))
}

extension FSMSend {
    struct Send: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send an event; print the state it committed.")

        @Argument(help: "The machine address: name, or name/key.")
        var address: String

        @Argument(help: "The event as JSON, or a bare case name for a case without payload.")
        var event: String

        @Flag(help: "Return once the machine queued the event, without waiting for its state.")
        var noWait = false

        @OptionGroup var connection: Connection

        func run() throws {
            let payload = try reporting { try EventArgument.parse(event) }
            let client = try connection.client()
            do {
                if noWait {
                    try client.post(payload, to: address)
                } else {
                    let reply = try client.sendReply(payload, to: address)
                    printLine(reply.payload)
                    if reply.header.flags.contains(.unhandled) {
                        // Not an error (exit 0): the machine chose to ignore it, in the state printed.
                        FileHandle.standardError.write(Data(("note: \(address) did not handle this event in its current state; "
                            + "nothing changed\n").utf8))
                    }
                }
            } catch where error.code == .alreadyApplied {
                // Applied once, on a send whose answer was lost: a success (exit 0), so that a
                // script retrying on failure does not send it again under a new key.
                FileHandle.standardError.write(Data(("note: \(address) applied this event on an earlier send whose answer was lost, "
                    + "and keeps that answer no longer" + (noWait ? "" : "; its state now:") + "\n").utf8))
                if !noWait { printLine(try reporting { try client.state(of: address) }) }
            } catch {
                throw report(error)
            }
        }
    }

    struct State: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a machine's current state as JSON.")

        @Argument(help: "The machine address.")
        var address: String

        @OptionGroup var connection: Connection

        func run() throws {
            let client = try connection.client()
            printLine(try reporting { try client.state(of: address) })
        }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop a machine (cancelling its work); print its final state.")

        @Argument(help: "The machine address.")
        var address: String

        @OptionGroup var connection: Connection

        func run() throws {
            let client = try connection.client()
            printLine(try reporting { try client.stop(address) })
        }
    }

    struct Restart: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Restart a machine from its initial state; print that state.",
            discussion: "Whatever the machine's onEnd in the topology: a running machine is stopped first, after the events "
                + "sent before, and an ended one starts again. A keyed instance must have been spawned by an event. "
                + "Needs the admin role.")

        @Argument(help: "The machine address.")
        var address: String

        @OptionGroup var connection: Connection

        func run() throws {
            let client = try connection.client()
            printLine(try reporting { try client.restart(address) })
        }
    }

    struct Cancel: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Cancel one effect of a machine by id.")

        @Argument(help: "The machine address.")
        var address: String

        @Argument(help: "The effect id: a name such as fetch, or a JSON string or integer.")
        var effect: String

        @OptionGroup var connection: Connection

        func run() throws {
            let id: [UInt8] = (try? JSONValue(parsing: Data(effect.utf8))).map { Array($0.jsonData) }
                ?? Array(JSONValue.string(effect).jsonData)
            let client = try connection.client()
            try reporting { try client.cancel(effect: id, of: address) }
        }
    }

    struct Locate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print where a machine lives as JSON: its workers in placement order, with each direct endpoint.",
            discussion: "The coordinator's answer to locate (docs/PROTOCOL.md, \"Locating a machine\"), as --route direct uses it. "
                + "Any role on the machine allows it.")

        @Argument(help: "The machine's name, or an address of it (name/key: the key is ignored).")
        var address: String

        @OptionGroup var connection: Connection

        func run() throws {
            let client = try connection.client()
            printLine(try reporting { try client.request(.locate, address: address).payload })
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the topology's machines and workers as JSON.",
            discussion: "Prints the coordinator's listing. A wildcard host in its endpoints (events, workersEndpoint), e.g. "
                + "tcp://0.0.0.0:5557, is replaced by the host of the clients endpoint used, so they can be connected to as printed.")

        @Option(help: ArgumentHelp("Print every instance of this keyed machine, one per line, instead of the listing "
            + "(which holds at most \(ListRequest.pageSize) per machine, with instanceCount).", valueName: "machine"))
        var instances: String?

        @OptionGroup var connection: Connection

        func run() throws {
            let client = try connection.client()
            if let machine = instances { return try printInstances(of: machine, client) }
            let payload = try reporting { try client.request(.list).payload }
            guard case .object(var listing)? = try? JSONValue(parsing: Data(payload)) else {
                throw report(WireError(.malformedFrame, "the listing from \(connection.resolvedEndpoint) is not a JSON object"))
            }
            for field in ["events", "workersEndpoint"] {
                if let endpoint = listing[field]?.stringValue {
                    listing[field] = .string(ClientEndpoint.connectable(endpoint, via: connection.resolvedEndpoint))
                }
            }
            print(JSONValue.object(listing).description)
        }

        /// Pages through `machine`'s instances, a listing of at most a page each.
        func printInstances(of machine: String, _ client: Client) throws {
            var after: String?
            repeat {
                let request = try reporting { try WireJSON.encode(ListRequest(machine: machine, after: after)) }
                let payload = try reporting { try client.request(.list, payload: request).payload }
                let listing = try reporting { try WireJSON.decode(Listing.self, from: payload, code: .malformedFrame, what: "the listing") }
                guard let found = listing.machines.first(where: { $0.name == machine }), found.keyed else {
                    throw report(WireError(.unknownMachine, "'\(machine)' is not a keyed machine of this topology; "
                        + "fsm-send list names them (keyed: true)"))
                }
                for address in found.instances { print(address) }
                after = found.instances.count == ListRequest.pageSize ? found.instances.last : nil
            } while after != nil
        }
    }
}

/// What `fsm-send` accepts as an event.
enum EventArgument {
    /// A bare case name (`login`) becomes `{"login":{}}`; anything else must be JSON.
    static func parse(_ text: String) throws(WireError) -> [UInt8] {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if let first = trimmed.unicodeScalars.first, CharacterSet.letters.contains(first) || first == "_",
           trimmed.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || $0 == "_" }) {
            return Array(#"{"\#(trimmed)":{}}"#.utf8)
        }
        let example = #"'{"updateEmail":{"_0":"ada@example.com"}}'"#
        // Strict, and it says where: Foundation's parser names no position and lets a trailing
        // comma through. The text as given, so columns count from its first character.
        var parser = LocatingJSONParser(Array(text.utf8), document: "the event", emptyAdvice: "give a case name or a JSON event",
                                        maximumDepth: 512)
        let multiline = text.contains("\n")
        let event: JSONValue
        do {
            event = try parser.parse()
        } catch {
            // The text is not echoed: it may hold a password typed into a value.
            throw WireError(.malformedJSON, "the event is neither a bare case name nor valid JSON: at \(error.position(multiline: multiline)) "
                + "(\(error.pathDescription)), \(error.message); write it as Swift's Codable encodes the event, e.g. \(example)")
        }
        if let duplicate = parser.duplicateKeys.first {
            throw WireError(.malformedJSON, "the event gives the key \(duplicate.pathDescription) twice (again at "
                + "\(duplicate.position(multiline: multiline))); JSON would keep only the last value, so remove one")
        }
        return Array(event.jsonData)
    }
}
