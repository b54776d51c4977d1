import GroveWire

/// The table of message kinds as docs/PROTOCOL.md shows it ("Who may send what"), written from
/// ``MessageKind/authority``: a test compares the page with it, so the page cannot drift from
/// what the coordinator checks.
extension MessageAuthority {
    /// The Markdown table, one row per kind, in the order of their numbers.
    package static var markdownTable: String {
        var lines = [
            "| kind | name | a client may send it | a worker may send it | the coordinator sends it to |",
            "|---|---|---|---|---|",
        ]
        for kind in MessageKind.allCases.sorted(by: { $0.rawValue < $1.rawValue }) {
            let authority = kind.authority
            let hex = "0x" + (kind.rawValue < 0x10 ? "0" : "") + String(kind.rawValue, radix: 16, uppercase: true)
            lines.append("| `\(hex)` | \(kind.name) | \(describe(authority.client)) | \(describe(authority.worker)) | "
                + "\(describe(authority.destinations)) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func describe(_ use: ClientUse?) -> String {
        switch use {
        case nil: "no"
        case .role(let role, .addressedMachine)?: "with the `\(role.rawValue)` role on the machine addressed"
        case .role(let role, .everyMachine)?: "with the `\(role.rawValue)` role over every machine"
        case .anyRole(.addressedMachine)?: "with any role on the machine addressed"
        case .anyRole(.everyMachine)?: "with any role over every machine"
        case .eachEnvelope?: "yes; each envelope is checked as a message of its kind"
        }
    }

    static func describe(_ check: WorkerCheck?) -> String {
        switch check {
        case nil: "no"
        case .registered?: "yes"
        case .groupKey?: "with the key of the group of the worker it names; the coordinator orders incarnations"
        case .answersItsRequest?: "only to answer a request sent to that worker; any other is dropped"
        case .hostsAddress?: "only for a machine it hosts"
        case .placedOnSender?: "listing keyed instances placed on it; the others are not listed"
        case .runsCall?: "only for an io call it runs"
        case .startedCall?: "only for an io call its machine started"
        case .eachEnvelope?: "yes; each envelope is checked as a message of its kind, and batches do not nest"
        }
    }

    /// Each destination on its own with its words, in the order the table names them.
    static let destinationNames: [(Destinations, String)] = [
        (.machinesWorker, "the worker hosting the machine"),
        (.namedWorker, "the worker instance named"),
        (.ioWorker, "a worker of the group the io request is placed on"),
        (.callOrigin, "the worker whose machine started the call"),
        (.callTarget, "the worker running the call"),
        (.requester, "the client that asked"),
        (.worker, "a worker"),
        (.everyWorker, "every registered worker"),
        (.directWorkers, "every registered worker serving direct routes"),
        (.watchers, "watchers (events endpoint)"),
        (.routeTargets, "the workers of its routes' targets, as events"),
        (.batching, "clients and workers that batch"),
    ]

    static func describe(_ destinations: Destinations) -> String {
        let names = destinationNames.filter { destinations.contains($0.0) }.map(\.1)
        return names.isEmpty ? "none: the coordinator handles it" : names.joined(separator: "; ")
    }
}
