import ArgumentParser
import Foundation
import GroveClient
import GroveWire

extension FSMSend {
    struct DeadLetters: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "dead-letters",
            abstract: "List, drop or retry the events quarantined because they crashed their worker.",
            discussion: """
                An event that its durable machine's worker died running twice is quarantined: kept \
                as a dead letter in that worker's store, refused (`quarantined`) when sent again, \
                and its machine goes on from its state before it. With no action, lists every \
                registered worker's dead letters, one per line, tab-separated: id (WORKER:N), \
                address, worker, time (UTC), crashes, event (JSON), what happened; --json prints \
                them as a JSON array. `drop ID` deletes one; `retry ID` deletes it and sends its \
                event once more to its machine, printing the state it committed (an event that \
                crashes the worker again is quarantined again after two more crashes). Needs the \
                admin role when the topology has client keys.
                """)

        @Argument(help: "drop or retry; nothing to list.")
        var action: String?

        @Argument(help: "The dead letter's id as listed: WORKER:N, e.g. main:1.")
        var id: String?

        @Flag(help: "Print the list as a JSON array.")
        var json = false

        @OptionGroup var connection: Connection

        func validate() throws {
            switch action {
            case nil:
                guard id == nil else { throw ValidationError("give an action before the id: fsm-send dead-letters drop \(id!)") }
            case "drop"?, "retry"?:
                guard let id else { throw ValidationError("\(action!) needs the dead letter's id as listed, e.g. fsm-send dead-letters \(action!) main:1") }
                guard Self.parse(id) != nil else {
                    throw ValidationError("'\(id)' is not a dead letter id; ids are WORKER:N as `fsm-send dead-letters` lists them, e.g. main:1")
                }
            case let other?:
                throw ValidationError("'\(other)' is not an action of dead-letters; use drop or retry, or nothing to list them")
            }
        }

        /// `main:1` → ("main", 1).
        static func parse(_ id: String) -> (worker: String, number: Int64)? {
            guard let colon = id.lastIndex(of: ":"), let number = Int64(id[id.index(after: colon)...]), number > 0,
                  colon > id.startIndex else { return nil }
            return (String(id[..<colon]), number)
        }

        func run() throws {
            let client = try connection.client()
            guard let action, let id, let (worker, number) = Self.parse(id) else { return try list(client) }
            let request = DeadLetterRequest(action == "drop" ? .drop : .retry, id: number)
            let payload = try reporting { try WireJSON.encode(request) }
            let reply = try reporting { try client.request(.deadLetters, address: worker, payload: payload) }
            if request.action == .retry { printLine(reply.payload) }
        }

        private func list(_ client: Client) throws {
            let listing = try reporting { try client.list() }
            var rows: [(worker: String, letter: DeadLetterList.Letter)] = []
            var unlisted: [String] = []
            for worker in listing.workers {
                guard worker.registered else {
                    FileHandle.standardError.write(Data("worker \(worker.name) is not registered; its dead letters are not listed\n".utf8))
                    unlisted.append(worker.name)
                    continue
                }
                let payload = try reporting { try WireJSON.encode(DeadLetterRequest(.list)) }
                let reply = try reporting { try client.request(.deadLetters, address: worker.name, payload: payload) }
                let list = try reporting { try WireJSON.decode(DeadLetterList.self, from: reply.payload, code: .malformedFrame, what: "the dead-letter list") }
                rows += list.deadLetters.map { (list.worker, $0) }
            }
            if json {
                let array = JSONValue.array(rows.map { row in
                    .object(["id": .string("\(row.worker):\(row.letter.id)"), "address": .string(row.letter.address),
                             "worker": .string(row.worker), "type": .string(row.letter.type), "time": .string(Self.time(row.letter.time)),
                             "crashes": .number(Double(row.letter.crashes)), "event": row.letter.event, "error": .string(row.letter.error)])
                })
                print(array.description)
            } else {
                // Said on stderr: stdout keeps one line per dead letter, none here, for scripts.
                if rows.isEmpty, unlisted.isEmpty {
                    let asked = listing.workers.map(\.name).joined(separator: ", ")
                    FileHandle.standardError.write(Data("no dead letters (asked worker(s) \(asked))\n".utf8))
                }
                for (worker, letter) in rows {
                    print(["\(worker):\(letter.id)", letter.address, worker, Self.time(letter.time), "\(letter.crashes)",
                           letter.event.description, letter.error].joined(separator: "\t"))
                }
            }
            // The list is partial when a worker could not be asked: exit 1, so that a script does
            // not read "no dead letters".
            if !unlisted.isEmpty {
                FileHandle.standardError.write(Data(("the list is incomplete: worker(s) \(unlisted.joined(separator: ", ")) not registered "
                    + "(restarting?); run it again once they are\n").utf8))
                throw ExitCode(SendExitStatus.otherError.rawValue)
            }
        }

        static func time(_ milliseconds: Int64) -> String {
            let formatter = ISO8601DateFormatter()
            return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
        }
    }
}
