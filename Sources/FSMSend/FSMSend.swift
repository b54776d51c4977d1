import ArgumentParser
import Foundation
import GroveCluster
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

            The endpoint comes from --endpoint, else FSM_ENDPOINT, else the default topology's \
            (ipc://@grove-default/clients).

            Exit status: 0 success; 2 bad input (malformed JSON, unknown machine, undecodable event — \
            the message names the failing path); 3 coordinator unreachable or no reply in time; 1 any \
            other error (machine ended, mailbox full, worker lost or unavailable).
            """,
        subcommands: [Send.self, State.self, Watch.self, Cancel.self, Stop.self, List.self],
        defaultSubcommand: Send.self
    )
}

struct Connection: ParsableArguments {
    @Option(help: "The coordinator's clients endpoint. Default: $FSM_ENDPOINT, else the default topology's.")
    var endpoint: String?

    @Option(help: "Seconds to wait for the coordinator before failing.")
    var timeout: Double = 5

    var resolvedEndpoint: String {
        endpoint ?? ProcessInfo.processInfo.environment["FSM_ENDPOINT"] ?? Topology.defaultTopology.coordinator.clients
    }

    func client() throws -> Client {
        try reporting { try Client(endpoint: resolvedEndpoint, timeout: .milliseconds(Int(timeout * 1000))) }
    }
}

/// Runs `body`, turning a ``WireError`` into a message on stderr and the documented exit status.
func reporting<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as WireError {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        switch error.code {
        case .malformedJSON, .unknownMachine, .undecodableEvent, .malformedFrame, .oversized, .unknownKind:
            throw ExitCode(2)
        case .unreachable, .timeout:
            throw ExitCode(3)
        default:
            throw ExitCode(1)
        }
    }
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
            if noWait {
                try reporting { try client.post(payload, to: address) }
            } else {
                printLine(try reporting { try client.send(payload, to: address) })
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

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the topology's machines and workers as JSON.")

        @OptionGroup var connection: Connection

        func run() throws {
            let client = try connection.client()
            let listing = try reporting { try client.list() }
            printLine(try WireJSON.encode(listing))
        }
    }

    struct Watch: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print state changes, effect lifecycle and worker events as JSON lines.",
            discussion: "Each line: {\"topic\":..., \"kind\":..., \"address\":..., \"payload\":...}. Topics: state:<address>, effect:<address>, output:<address>, worker:<name>.")

        @Argument(help: "Topic prefixes to watch, e.g. state:auth effect: (default: everything).")
        var prefixes: [String] = []

        @Option(help: "Stop after this many seconds (default: until interrupted).")
        var duration: Double?

        @Option(help: "Stop after this many messages.")
        var count: Int?

        @OptionGroup var connection: Connection

        func run() throws {
            let client = try connection.client()
            let listing = try reporting { try client.list() }
            let watcher = try reporting { try Watcher(endpoint: listing.events, prefixes: prefixes) }
            FileHandle.standardError.write(Data("watching \(listing.events)\n".utf8))
            let deadline = duration.map { Date().addingTimeInterval($0) }
            var seen = 0
            while deadline.map({ Date() < $0 }) ?? true, count.map({ seen < $0 }) ?? true {
                guard let (topic, message) = watcher.next() else { continue }
                let payload = (try? JSONValue(parsing: Data(message.payload))) ?? .string(String(decoding: message.payload, as: UTF8.self))
                let line: JSONValue = .object([
                    "topic": .string(topic), "kind": .string(message.header.kind.name),
                    "address": .string(message.address), "payload": payload,
                ])
                print(line.description)
                fflush(nil)
                seen += 1
            }
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
        do {
            return Array(try JSONValue(parsing: Data(trimmed.utf8)).jsonData)
        } catch {
            throw WireError(.malformedJSON, "the event '\(text)' is neither a bare case name nor valid JSON (\(Self.reason(error))); "
                + "write it as Swift's Codable encodes the event, e.g. '{\"updateEmail\":{\"_0\":\"ada@example.com\"}}'")
        }
    }

    static func reason(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            return (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String ?? context.debugDescription
        }
        return "\(error)"
    }
}
