import ArgumentParser
import Foundation
import GroveClient
import GroveCluster
import GroveWire

extension FSMSend {
    struct Suspensions: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "suspensions",
            abstract: "List the client keys suspended for crashing workers, and the keys refused on the events endpoint, or lift one.",
            discussion: """
                The coordinator attributes each worker crash to the event the worker was running \
                and to the client key that sent it; a key whose events crash workers \
                poison.suspendAfter times (default 2) within poison.periodMs is suspended: its \
                events are refused (forbidden) until an admin lifts the suspension. With no \
                action, lists the suspended keys, one per line, tab-separated: key (Z85), crashes, \
                how long ago, the event patterns that crashed (TYPE.CASE); --json prints the \
                coordinator's list. `lift KEY` lifts one (the 40 Z85 characters as listed, or \
                the client's .key file). Keys refused on the events endpoint because their \
                watchers subscribed past limits.watcherSubscriptions are listed too (crashes and \
                age '-', then "watcher refused"), and lifted the same way. Needs the admin role \
                when the topology has client keys.
                """)

        @Argument(help: "lift; nothing to list.")
        var action: String?

        @Argument(help: "The suspended key: its 40 Z85 characters as listed, or its .key file.")
        var key: String?

        @Flag(help: "Print the coordinator's list as JSON.")
        var json = false

        @OptionGroup var connection: Connection

        func validate() throws {
            switch action {
            case nil:
                guard key == nil else { throw ValidationError("give the action before the key: fsm-send suspensions lift '\(key!)'") }
            case "lift"?:
                guard key != nil else { throw ValidationError("lift needs the suspended key as listed, e.g. fsm-send suspensions lift rq1Z…") }
            case let other?:
                throw ValidationError("'\(other)' is not an action of suspensions; use lift KEY, or nothing to list them")
            }
        }

        func run() throws {
            let client = try connection.client()
            guard let key else {
                let list = try poisonList(client)
                if json { return try printJSON(list) }
                for suspension in list.suspended {
                    print([suspension.key, "\(suspension.crashes)", age(suspension.ageMs),
                           suspension.patterns.map(\.description).joined(separator: ",")].joined(separator: "\t"))
                }
                for key in list.refusedWatchers {
                    print([key, "-", "-", "watcher refused: subscribed past limits.watcherSubscriptions"].joined(separator: "\t"))
                }
                return
            }
            let resolved = try reporting { () throws(WireError) in
                do {
                    return try KeyFile.z85(ofKeyOrFile: key)
                } catch {
                    throw WireError(.malformedJSON, "'\(key)' is neither 40 Z85 characters nor a public key file: \(error)")
                }
            }
            let payload = try reporting { try WireJSON.encode(PoisonRequest(.lift, key: resolved)) }
            _ = try reporting { try client.request(.poison, payload: payload) }
        }
    }

    struct Quarantines: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "quarantines",
            abstract: "List the event patterns quarantined for every address after crashing workers, or release one.",
            discussion: """
                The coordinator attributes each worker crash to the event the worker was running, \
                as a pattern: the machine type and the event's case, whatever the address and the \
                values. A pattern that crashes workers poison.quarantineAfter times (default 2) \
                within poison.periodMs is quarantined: clients' events of it are refused \
                (quarantined) for every address until an admin releases it. With no action, lists \
                them, one per line, tab-separated: type, case, crashes, how long ago, the \
                addresses it crashed (most recent last); --json prints the coordinator's list. \
                `release TYPE CASE` releases one, once the machine is fixed. Needs the admin role \
                when the topology has client keys. (An event that crashes one durable machine \
                twice is also quarantined at that address, as a dead letter: fsm-send dead-letters.)
                """)

        @Argument(help: "release; nothing to list.")
        var action: String?

        @Argument(help: "The pattern's machine type, as listed.")
        var type: String?

        @Argument(help: "The pattern's event case, as listed.")
        var event: String?

        @Flag(help: "Print the coordinator's list as JSON.")
        var json = false

        @OptionGroup var connection: Connection

        func validate() throws {
            switch action {
            case nil:
                guard type == nil else { throw ValidationError("give the action before the pattern: fsm-send quarantines release \(type!) …") }
            case "release"?:
                guard type != nil, event != nil else {
                    throw ValidationError("release needs the pattern's type and case as listed, e.g. fsm-send quarantines release Counter add")
                }
            case let other?:
                throw ValidationError("'\(other)' is not an action of quarantines; use release TYPE CASE, or nothing to list them")
            }
        }

        func run() throws {
            let client = try connection.client()
            guard let type, let event else {
                let list = try poisonList(client)
                if json { return try printJSON(list) }
                for quarantine in list.quarantined {
                    print([quarantine.type, quarantine.event, "\(quarantine.crashes)", age(quarantine.ageMs),
                           quarantine.addresses.joined(separator: ",")].joined(separator: "\t"))
                }
                return
            }
            let payload = try reporting { try WireJSON.encode(PoisonRequest(.release, type: type, event: event)) }
            _ = try reporting { try client.request(.poison, payload: payload) }
        }
    }
}

private func poisonList(_ client: Client) throws -> PoisonList {
    let payload = try reporting { try WireJSON.encode(PoisonRequest(.list)) }
    let reply = try reporting { try client.request(.poison, payload: payload) }
    return try reporting { try WireJSON.decode(PoisonList.self, from: reply.payload, code: .malformedFrame, what: "the poison list") }
}

private func printJSON(_ list: PoisonList) throws {
    printLine(try reporting { try WireJSON.encode(list) })
}

/// `ageMs` for people: "12 s ago".
private func age(_ milliseconds: Int64) -> String {
    milliseconds < 120_000 ? "\(milliseconds / 1000) s ago" : "\(milliseconds / 60_000) min ago"
}
