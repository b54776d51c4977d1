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
/// least that many).
struct Verification: Codable, Sendable {
    var acknowledged: Int
    var applied: Int
    var unanswered: Int
    var missing: Int
    var twice: Int

    init(acknowledged: Int, sent: Int, applied: Int) {
        self.acknowledged = acknowledged
        self.applied = applied
        unanswered = sent - acknowledged
        missing = max(0, acknowledged - applied)
        twice = max(0, applied - sent)
    }

    var holds: Bool { missing == 0 && twice == 0 }

    var text: String {
        "acknowledged \(acknowledged), applied \(applied) (\(unanswered) unanswered): "
            + (holds ? "every acknowledged event applied, none twice"
                     : "\(missing) acknowledged event(s) lost, at least \(twice) applied twice")
    }
}

/// Reads the counts of the driven machines (`{"count": N}` states, as the shipped Counter's).
struct CountReader {
    let endpoint: String
    let credentials: Credentials?

    /// The sum of the counts at `addresses`; an instance not spawned yet counts 0. Waits up to
    /// 60 s for a machine whose worker is restarting.
    func total(of addresses: [String]) throws -> Int {
        let client = try Client(endpoint: endpoint, timeout: .seconds(60), retryUnavailable: true, credentials: credentials)
        var total = 0
        for address in addresses {
            let json: [UInt8]
            switch Result(catching: { () throws(WireError) -> [UInt8] in try client.state(of: address) }) {
            case .success(let state):
                json = state
            case .failure(let error):
                guard error.code == .unknownMachine, address.contains("/") else { throw error }
                continue // a keyed instance no event reached
            }
            guard let count = try? WireJSON.decode(Counted.self, from: json).count else {
                throw LoadError("--verify reads each machine's count, but the state of \(address) is \(String(decoding: json, as: UTF8.self)); "
                    + "drive a machine whose state is {\"count\": N}, like the shipped Counter")
            }
            total += count
        }
        return total
    }

    private struct Counted: Decodable { var count: Int }
}
