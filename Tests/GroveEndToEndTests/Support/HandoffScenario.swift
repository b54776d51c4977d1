import Foundation
import GroveWire
import Testing

/// A running topology with a pool `pool` of two workers, `pool-1` and `pool-2`, whose keyed
/// `counter` (Counter) and `poller` (PollingService) machines keep `state` in PostgreSQL with
/// `durability.handoff`: on this host (``Cluster``) or spread over network hosts
/// (``NetworkHostsTests/Spread``). ``HandoffScenario`` runs the handoff cases on either, so
/// `HandoffTests` and `NetworkHostsHandoffTests` check one thing written once.
protocol HandoffPool {
    /// Runs fsm-send with `arguments` against the topology's clients endpoint.
    func fsmSend(_ arguments: [String], timeout: Duration) async throws -> CommandResult
    /// The topology's machines and workers, as `fsm-send list` prints them.
    func list() async throws -> Listing
    /// What the processes of pool worker `name` started by the test wrote to stderr.
    func stderr(ofWorker name: String) -> String
}

extension Cluster: HandoffPool {
    /// The harness keeps an external worker's output in the cluster's directory.
    func stderr(ofWorker name: String) -> String {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasPrefix("worker-\(name)-") && $0.hasSuffix(".err") }.map { file in
            (try? String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)) ?? ""
        }.joined()
    }
}

/// Issue 37's first done-when, as steps over a ``HandoffPool``: `kill -9` of a pool worker kept
/// down (its keys answer from the other with their acknowledged counts, then go home), and
/// `SIGSTOP` past the grace (the paused worker's writes are refused by the fence, its copies
/// dropped, every read the adopter's). Timing is recorded, not asserted: each wait is bounded
/// by the grace plus ``slack``.
struct HandoffScenario<Pool: HandoffPool> {
    let pool: Pool
    /// The topology's name, under which its rows are kept.
    let topology: String
    let graceMs: Int

    static var keys: [String] { (0..<16).map { "counter/k\($0)" } }
    /// How long past the grace a wait may last before the test fails: generous, for a loaded
    /// machine (the time it took is printed).
    static var slack: Duration { .seconds(10) }

    /// Which worker the store says owns each machine of the topology.
    func owners() -> [String: String] {
        let rows = PostgresServer.psql("SELECT address || ' ' || owner FROM grove_machines WHERE topology = '\(topology)'") ?? ""
        return Dictionary(rows.split(separator: "\n").compactMap { row -> (String, String)? in
            let parts = row.split(separator: " ")
            return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        }, uniquingKeysWith: { first, _ in first })
    }

    /// The keys the store says `worker` owns; at least one (the hash spreads 16 keys over two).
    func keys(of worker: String) throws -> [String] {
        let owners = owners()
        let mine = Self.keys.filter { owners[$0] == worker }
        try #require(!mine.isEmpty, "no key on \(worker): \(owners)")
        return mine
    }

    /// Sends `event` to `address` and returns the state it committed.
    func send(_ address: String, _ event: String) async throws -> JSONValue {
        try await printedJSON(["send", address, event])
    }

    func state(_ address: String) async throws -> JSONValue {
        try await printedJSON(["state", address])
    }

    private func printedJSON(_ arguments: [String]) async throws -> JSONValue {
        let result = try await pool.fsmSend(arguments, timeout: .seconds(20))
        guard result.status == 0 else { throw HarnessError("fsm-send \(arguments.joined(separator: " ")) failed: \(result)") }
        return try JSONValue(parsing: Data(result.stdout.utf8))
    }

    /// Whether worker `name` is registered, and its pid.
    func registration(of name: String) async throws -> (registered: Bool, pid: Int32?) {
        let worker = try await pool.list().workers.first { $0.name == name }
        return (worker?.registered ?? false, worker?.pid)
    }

    func pid(of name: String) async throws -> Int32 {
        let (registered, pid) = try await registration(of: name)
        guard registered, let pid else { throw HarnessError("worker \(name) is not registered") }
        return pid
    }

    static func count(_ state: JSONValue) -> Int? {
        if case .integer(let count)? = state["count"] { return Int(count) }
        if case .number(let count)? = state["count"] { return Int(count) }
        return nil
    }

    /// Sends each key an `add` of a different amount: the counts acknowledged, by key.
    func fill() async throws -> [String: Int] {
        var acknowledged: [String: Int] = [:]
        for (index, key) in Self.keys.enumerated() {
            #expect(try await send(key, #"{"add":{"_0":\#(index + 1)}}"#) == json(#"{"count":\#(index + 1)}"#))
            acknowledged[key] = index + 1
        }
        return acknowledged
    }

    /// The snapshot the store holds for `address`, as a digest: it changes when the instance
    /// commits, whichever worker runs it.
    func storedSnapshot(of address: String) -> String? {
        PostgresServer.psql("SELECT md5(snapshot) FROM grove_machines WHERE topology = '\(topology)' AND address = '\(address)'")?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `kill -9` of `pool-1`, kept down until `bringBack` starts it again (or its supervisor
    /// does after a long backoff): each of its keys answers from `pool-2` with the count
    /// acknowledged before the kill, goes on there, and goes home with the adopter's state once
    /// `pool-1` registers again. A poller of pool-1's, adopted meanwhile, goes home with its
    /// timer: it polls on there without a message (`returned`).
    /// - Returns: How long after the loss was seen the last of its keys answered.
    @discardableResult
    func killedWorkersKeysMoveAndGoHome(bringBack: () async throws -> Void) async throws -> Duration {
        var acknowledged = try await fill()
        let lostKeys = try keys(of: "pool-1")
        let pollers = (0..<8).map { "poller/p\($0)" }
        for poller in pollers {
            #expect(try await send(poller, #"{"startPolling":{"interval":0.5}}"#).caseName == "polling")
        }
        let polling = owners()
        let poller = try #require(pollers.first { polling[$0] == "pool-1" }, "no poller on pool-1: \(polling)")
        let killed = try await pid(of: "pool-1")
        kill(killed, SIGKILL)
        let sent = ContinuousClock.now
        try await waitUntil("pool-1 to be declared lost", timeout: .seconds(20)) { try await !registration(of: "pool-1").registered }
        let lost = ContinuousClock.now

        var waiting = Set(lostKeys)
        try await waitUntil("\(lostKeys) to answer from pool-2", timeout: .milliseconds(graceMs) + Self.slack) {
            for key in waiting.sorted() {
                let read = try await pool.fsmSend(["state", key, "--timeout", "0.2"], timeout: .seconds(20))
                guard read.status == 0 else { continue }
                let state = try JSONValue(parsing: Data(read.stdout.utf8))
                #expect(Self.count(state) == acknowledged[key], "\(key): \(state)")
                waiting.remove(key)
            }
            return waiting.isEmpty
        }
        let answered = ContinuousClock.now - lost
        print("handoff: \(lostKeys.count) keys of pool-1 answered from pool-2 \(answered) after its loss was seen, "
              + "\(ContinuousClock.now - sent) after kill -9 (grace \(graceMs) ms)")
        #expect(try await registration(of: "pool-1").registered == false, "still down meanwhile")
        let adopted = owners()
        for key in lostKeys { #expect(adopted[key] == "pool-2", "\(key): \(adopted)") }
        // It goes on there: one more event each.
        for key in lostKeys {
            acknowledged[key]! += 1
            #expect(try await send(key, "increment") == json(#"{"count":\#(acknowledged[key]!)}"#))
        }
        // A read adopts the poller there; it polls on (its record changes without a message).
        #expect(try await state(poller).caseName == "polling")
        #expect(owners()[poller] == "pool-2")
        let adoptedSnapshot = storedSnapshot(of: poller)
        try await waitUntil("\(poller) to poll on pool-2", timeout: .seconds(20)) { storedSnapshot(of: poller) != adoptedSnapshot }

        // Back: placement is restored, with the adopter's state.
        try await bringBack()
        try await waitUntil("pool-1 to register again", timeout: .seconds(30)) {
            let (registered, pid) = try await registration(of: "pool-1")
            return registered && pid != killed
        }
        for key in Self.keys {
            acknowledged[key]! += 1
            #expect(try await send(key, "increment") == json(#"{"count":\#(acknowledged[key]!)}"#))
        }
        let home = owners()
        for key in lostKeys { #expect(home[key] == "pool-1", "\(key): \(home)") }
        for key in Self.keys {
            #expect(Self.count(try await state(key)) == acknowledged[key], "\(key)")
        }
        // The poller went home with its timer, no message sent to it: pool-1 took it back from
        // the store and it polls there (before `returned`, it waited in the store for a message).
        try await waitUntil("\(poller) to be taken back by pool-1", timeout: .seconds(20)) { owners()[poller] == "pool-1" }
        let homeSnapshot = storedSnapshot(of: poller)
        try await waitUntil("\(poller) to poll on pool-1", timeout: .seconds(20)) { storedSnapshot(of: poller) != homeSnapshot }
        #expect(owners()[poller] == "pool-1")
        return answered
    }

    /// `SIGSTOP` of `pool-1` past the grace, then `SIGCONT`: its keys and a poller of its own
    /// run on `pool-2` meanwhile; resumed, the paused copy's overdue poll is refused by the
    /// fence, the worker drops its copies of what was adopted instead of ending, registers
    /// again as the same process, and every read agrees with what was acknowledged.
    func pausedWorkersCopiesAreDropped() async throws {
        var acknowledged = try await fill()
        let lostKeys = try keys(of: "pool-1")
        // A poller of pool-1's: its timer fires on the paused copy as soon as it runs again.
        let pollers = (0..<8).map { "poller/p\($0)" }
        for poller in pollers {
            #expect(try await send(poller, #"{"startPolling":{"interval":1}}"#).caseName == "polling")
        }
        let polling = owners()
        let poller = try #require(pollers.first { polling[$0] == "pool-1" }, "no poller on pool-1: \(polling)")
        let paused = try await pid(of: "pool-1")
        kill(paused, SIGSTOP)
        var resumed = false
        defer { if !resumed { kill(paused, SIGCONT) } }
        try await waitUntil("pool-1 to be declared lost", timeout: .seconds(20)) { try await !registration(of: "pool-1").registered }

        // Past the grace, its keys run on pool-2 from their committed state (fsm-send retries
        // `unavailable` until then).
        for key in lostKeys {
            acknowledged[key]! += 10
            let state = try await send(key, #"{"add":{"_0":10}}"#)
            #expect(Self.count(state) == acknowledged[key], "\(key): \(state)")
        }
        // A read adopts the poller: pool-2 claims it and polls on.
        #expect(try await state(poller).caseName == "polling")
        let adopted = owners()
        for key in lostKeys + [poller] { #expect(adopted[key] == "pool-2", "\(key): \(adopted)") }

        // Resumed, the paused copy's overdue poll commits: the fence refuses it, and the
        // worker drops that copy instead of ending.
        kill(paused, SIGCONT)
        resumed = true
        try await waitUntil("pool-1's stale write of \(poller) to be refused", timeout: .seconds(20)) {
            pool.stderr(ofWorker: "pool-1").contains(
                "instance \(poller) moved to another worker of the pool (the shared store refused this worker's write")
        }
        // It registers again and drops the copies it held of what was adopted.
        try await waitUntil("pool-1 to register again", timeout: .seconds(30)) { try await registration(of: "pool-1").registered }
        for key in lostKeys {
            try await waitUntil("pool-1 to drop \(key)", timeout: .seconds(20)) {
                pool.stderr(ofWorker: "pool-1").contains("instance \(key) moved to another worker of the pool")
            }
        }
        // Nothing it held was written over the adopter's: the store and every read agree
        // with what was acknowledged, and the keys go home with it.
        for key in Self.keys {
            #expect(Self.count(try await state(key)) == acknowledged[key], "\(key)")
        }
        for key in lostKeys {
            acknowledged[key]! += 1
            #expect(try await send(key, "increment") == json(#"{"count":\#(acknowledged[key]!)}"#))
        }
        let home = owners()
        for key in lostKeys { #expect(home[key] == "pool-1", "\(key): \(home)") }
        #expect(try await pid(of: "pool-1") == paused, "the same process, not a restart")
        #expect(!pool.stderr(ofWorker: "pool-1").contains("critical"), "pool-1 kept serving")
    }
}
