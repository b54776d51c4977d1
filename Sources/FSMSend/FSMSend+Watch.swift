import ArgumentParser
import Foundation
import GroveClient
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

                Each publication's line carries "sequence", its number on its topic (1, 2, 3, … per topic). A watcher \
                that falls more than the topology's queues.watcherOutbox publications behind has the next ones dropped; \
                when a later number shows it, a line {"topic":..., "kind":"gap", "missed":N} comes first and stderr says \
                how many were missed. {"kind":"restarted"} says the coordinator restarted: what was missed then cannot be \
                counted. With --resync, each gap or restart is followed by the current states of the watched addresses, \
                one {"topic":..., "kind":"snapshot", "sequence":..., "payload":...} line each, from the coordinator's \
                snapshot; publications they make stale are skipped.

                The events endpoint comes from --events, else from the coordinator's listing; a wildcard \
                host there (tcp://0.0.0.0:5557, tcp://*:5557) is replaced by the host of the clients \
                endpoint, so a watcher on another host connects to the coordinator's machine.

                Prefixes are bounded (the topology's limits): each at most limits.addressBytes and \
                its topic's kind, and at most limits.watcherSubscriptions (default 128) distinct \
                ones per key. A watcher past either gets nothing (its connection is reset and, \
                with keys, its key refused on the events endpoint); the coordinator logs why, \
                `fsm-send suspensions` lists the refused key and `fsm-send suspensions lift KEY` \
                admits it again.
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

        @Flag(help: "After missing publications (or a coordinator restart), print the current states of the watched addresses.")
        var resync = false

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
            let resyncClient = try resync ? connection.client() : nil
            let deadline = duration.map { Date().addingTimeInterval($0) }
            var seen = 0
            var resyncDue = false
            while deadline.map({ Date() < $0 }) ?? true, count.map({ seen < $0 }) ?? true {
                guard let delivery = watcher.next() else { continue }
                switch delivery {
                case .publication(let topic, let message, let sequence):
                    var line: [String: JSONValue] = [
                        "topic": .string(topic), "kind": .string(message.header.kind.name),
                        "address": .string(message.address), "payload": Self.payload(message.payload),
                    ]
                    if let sequence { line["sequence"] = .integer(Int64(sequence.number)) }
                    Self.emit(line)
                    seen += 1
                    // After the publication that showed the gap, so the lines keep their order.
                    if resyncDue, let resyncClient { Self.printSnapshot(watcher, prefixes: prefixes, via: resyncClient) }
                    resyncDue = false
                case .gap(let topic, let missed):
                    FileHandle.standardError.write(Data(("missed \(missed) publication\(missed == 1 ? "" : "s") on \(topic): this watcher fell "
                        + "more than the topology's queues.watcherOutbox behind" + (resync ? "; fetching the current states\n"
                        : "; --resync prints the current states after a gap\n")).utf8))
                    Self.emit(["topic": .string(topic), "kind": .string("gap"), "missed": .integer(Int64(clamping: missed))])
                    resyncDue = true
                case .restarted(let from, let to):
                    FileHandle.standardError.write(Data(("the coordinator restarted (publication epoch \(from) became \(to)); "
                        + "publications missed meanwhile cannot be counted\n").utf8))
                    Self.emit(["topic": .string(""), "kind": .string("restarted"), "fromEpoch": .integer(Int64(from)), "toEpoch": .integer(Int64(to))])
                    resyncDue = true
                }
            }
        }

        /// Prints the snapshot's states no older than what was printed, one line each.
        static func printSnapshot(_ watcher: Watcher, prefixes: [String], via client: Client) {
            do {
                let snapshot = try client.snapshot(prefixes: prefixes)
                let entries = watcher.apply(snapshot)
                for entry in entries {
                    // From the topic, which the coordinator vouches for, as a live line's address is.
                    let address = String(entry.topic.dropFirst("state:".count))
                    emit(["topic": .string(entry.topic), "kind": .string("snapshot"), "address": .string(address),
                          "sequence": .integer(Int64(entry.sequence)), "payload": entry.payload])
                }
                let omitted = snapshot.omitted.isEmpty ? "" : "; \(snapshot.omitted.count) omitted (over the coordinator's budget; "
                    + "read them with fsm-send state): \(snapshot.omitted.prefix(5).joined(separator: ", "))"
                FileHandle.standardError.write(Data("resynced: \(entries.count) current state\(entries.count == 1 ? "" : "s")\(omitted)\n".utf8))
            } catch {
                FileHandle.standardError.write(Data("error: the snapshot failed, watching on without it: \(error)\n".utf8))
            }
        }

        static func payload(_ bytes: [UInt8]) -> JSONValue {
            (try? JSONValue(parsing: Data(bytes))) ?? .string(String(decoding: bytes, as: UTF8.self))
        }

        static func emit(_ line: [String: JSONValue]) {
            print(JSONValue.object(line).description)
            fflush(nil)
        }
    }
}
