import ArgumentParser
import Foundation
import GroveCluster
import GroveWire

extension FSMSend {
    struct Watch: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print state changes, effect lifecycle and worker events as JSON lines.",
            discussion: """
                Each line: {"topic":..., "kind":..., "address":..., "payload":...}. Topics: state:<address>, \
                effect:<address>, output:<address>, machine:<address> (it ended), route:<from> (a routed event that \
                failed), worker:<name>.

                The events endpoint comes from --events, else from the coordinator's listing; a wildcard \
                host there (tcp://0.0.0.0:5557, tcp://*:5557) is replaced by the host of the clients \
                endpoint, so a watcher on another host connects to the coordinator's machine.
                """)

        @Argument(help: "Topic prefixes to watch, e.g. state:auth effect: (default: everything).")
        var prefixes: [String] = []

        @Option(parsing: .unconditional, help: "Stop after this many seconds (default: until interrupted).")
        var duration: Double?

        @Option(parsing: .unconditional, help: "Stop after this many messages.")
        var count: Int?

        @Option(name: .customLong("events"), help: ArgumentHelp(
            "The coordinator's events endpoint, when the one the listing reports cannot be reached from here.",
            valueName: "endpoint"))
        var eventsEndpoint: String?

        @OptionGroup var connection: Connection

        func validate() throws {
            if let duration, !(duration > 0 && duration <= 1_000_000) {
                throw ValidationError("--duration must be a number of seconds above 0 and at most 1000000, e.g. --duration 10; got \(duration)")
            }
            if let count, count < 1 {
                throw ValidationError("--count must be at least 1 (the messages to print before stopping); got \(count)")
            }
        }

        func run() throws {
            let events = try eventsEndpoint ?? {
                let client = try connection.client()
                let listing = try reporting { try client.list() }
                return ClientEndpoint.connectable(listing.events, via: connection.resolvedEndpoint)
            }()
            // A prefix no topic can start with waits forever: say so, and watch anyway.
            let topics = ["state:", "effect:", "output:", "worker:", "machine:", "route:"]
            for prefix in prefixes where !topics.contains(where: { prefix.hasPrefix($0) || $0.hasPrefix(prefix) }) {
                FileHandle.standardError.write(Data(("warning: no topic starts with '\(prefix)', so it matches nothing; topics are "
                    + "state:, effect:, output:, machine: and route: then a machine address, and worker: then a worker name\n").utf8))
            }
            let credentials = try connection.credentials()
            let watcher = try reporting { try Watcher(endpoint: events, prefixes: prefixes, credentials: credentials) }
            FileHandle.standardError.write(Data("watching \(events)\n".utf8))
            let deadline = duration.map { Date().addingTimeInterval($0) }
            var seen = 0
            while deadline.map({ Date() < $0 }) ?? true, count.map({ seen < $0 }) ?? true {
                guard let (topic, message) = watcher.next() else { continue }
                let payload = (try? JSONValue(parsing: Data(message.payload)))
                    ?? .string(String(decoding: message.payload, as: UTF8.self))
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
