import Foundation
import GroveClient
import GroveCluster
import GroveWire

/// What `--verify` found for one run: the events acknowledged against how much the driven
/// machines' counts grew, read back through `get` before and after the run.
///
/// Every acknowledged event must have been applied: `missing` counts acknowledged events no
/// count shows (lost). An event may run without its answer arriving (its worker died after
/// writing it, before the reply left), so `applied` can exceed `acknowledged` by up to the
/// events left unanswered; beyond `sent`, some event was applied twice (`twice` counts at
/// least that many). A count that went back during the run (`wentBack`) says a machine's state
/// was lost, not that events were: the sums then prove nothing, and the text says why.
struct Verification: Codable, Sendable {
    var acknowledged: Int
    var applied: Int
    var unanswered: Int
    var missing: Int
    var twice: Int
    /// The driven addresses whose count was lower after the run than before it.
    var wentBack: [CountWentBack]?

    /// One address whose count fell during the run.
    struct CountWentBack: Codable, Sendable, Equatable {
        var address: String
        var before: Int
        var after: Int
    }

    init(acknowledged: Int, sent: Int, before: [String: Int], after: [String: Int]) {
        self.acknowledged = acknowledged
        applied = after.values.reduce(0, +) - before.values.reduce(0, +)
        unanswered = sent - acknowledged
        let fell = before.compactMap { address, count in
            after[address, default: 0] < count ? CountWentBack(address: address, before: count, after: after[address, default: 0]) : nil
        }
        wentBack = fell.isEmpty ? nil : fell.sorted { $0.address < $1.address }
        missing = fell.isEmpty ? max(0, acknowledged - applied) : 0
        twice = fell.isEmpty ? max(0, applied - sent) : 0
    }

    var holds: Bool { missing == 0 && twice == 0 && wentBack == nil }

    var text: String {
        if let wentBack, let first = wentBack.first {
            let others = wentBack.count > 1 ? " (and \(wentBack.count - 1) other address(es))" : ""
            return "acknowledged \(acknowledged), but the count of \(first.address) went back from \(first.before) to \(first.after)"
                + "\(others) during the run: the machine's state was lost (it restarted, or its worker did, without durability), "
                + "so the counts cannot tell lost or doubled events; drive a durable machine (durability \"state\" or \"journal\") "
                + "to check a run with workers killed"
        }
        return "acknowledged \(acknowledged), applied \(applied) (\(unanswered) unanswered): "
            + (holds ? "every acknowledged event applied, none twice"
                     : "\(missing) acknowledged event(s) lost, at least \(twice) applied twice")
    }
}

/// Reads the counts of the driven machines (`{"count": N}` states, as the shipped Counter's).
struct CountReader {
    let endpoint: String
    let credentials: Credentials?

    /// The count at each of `addresses`; an instance not spawned yet counts 0. Waits up to 60 s
    /// for a machine whose worker is restarting.
    func counts(of addresses: [String]) throws -> [String: Int] {
        let client = try Client(endpoint: endpoint, timeout: .seconds(60), retryUnavailable: true, credentials: credentials)
        var counts: [String: Int] = [:]
        for address in addresses {
            let json: [UInt8]
            switch Result(catching: { () throws(WireError) -> [UInt8] in try client.state(of: address) }) {
            case .success(let state):
                json = state
            case .failure(let error):
                guard error.code == .unknownMachine, address.contains("/") else { throw error }
                counts[address] = 0 // a keyed instance no event reached
                continue
            }
            guard let count = try? WireJSON.decode(Counted.self, from: json).count else {
                throw LoadError("--verify reads each machine's count, but the state of \(address) is \(String(decoding: json, as: UTF8.self)); "
                    + "drive a machine whose state is {\"count\": N}, like the shipped Counter")
            }
            counts[address] = count
        }
        return counts
    }

    private struct Counted: Decodable { var count: Int }
}
