import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// Scenario 25: a timer-driven PollingService keeps ticking and fetching through an io
    /// worker; pause and stop cancel the fetch in flight. Over ipc.
    @Suite(.timeLimit(.minutes(2)))
    struct PollingTests {
        static func topology(ioDelayMs: Int) -> TopologyFile {
            TopologyFile(
                name: "polling", transport: .ipc,
                workers: [.init(name: "edge"), .init(name: "data-io", arguments: ioDelayMs > 0 ? ["--io-delay-ms", "\(ioDelayMs)"] : [])],
                machines: [.init(name: "poller", type: "PollingService", worker: "edge", keyed: true)],
                io: [("FetchData", "data-io")]
            )
        }

        /// Issue 21: an interval past a year trapped the worker (a `Duration` overflow) and every
        /// machine on it lost its state; one of a microsecond polled in a hot loop. Both are
        /// refused with a clear error, and the worker's machines keep going.
        @Test func intervalsOutOfRangeAreRefusedAndTheWorkerGoesOn() async throws {
            try await withCluster(Self.topology(ioDelayMs: 0)) { cluster in
                let running = try await cluster.send("poller/kept", #"{"startPolling":{"interval":60}}"#)
                #expect(running.caseName == "polling")
                for interval in ["1e21", "1e-6", "0.001", "-1"] {
                    let refused = try await cluster.fsmSend(["send", "poller/x", #"{"startPolling":{"interval":\#(interval)}}"#])
                    #expect(refused.status == 2, "\(refused)")
                    #expect(refused.stderr.contains("invalid-event"), "\(refused)")
                    #expect(refused.stderr.contains("it must be from 0.1 s (a tenth of a second) to 31536000 s (a year)"), "\(refused)")
                }
                let kept = try await cluster.state("poller/kept")
                #expect(kept["polling"]?["interval"] == json("60"), "the worker kept its machines: \(kept)")
                #expect(try await cluster.send("poller/x", #"{"startPolling":{"interval":0.5}}"#).caseName == "polling")
                #expect(try await cluster.send("poller/x", "stopPolling") == idle)
            }
        }

        @Test func thePollerKeepsTickingAndPauseStopsIt() async throws {
            try await withCluster(Self.topology(ioDelayMs: 0)) { cluster in
                let watcher = try await cluster.watch(["state:poller/", "effect:poller/"])
                let started = try await cluster.send("poller/a", #"{"startPolling":{"interval":0.1}}"#)
                #expect(started["polling"]?["interval"] == json("0.1"))

                // Each tick fetches on the io worker and the data comes back into the state.
                let fetches = try await watcher.waitFor("three fetches by ticks", count: 3) { $0.isEffect("poller/a", "completed", id: "poll-fetch") }
                let runners = Set(fetches.compactMap(\.worker))
                #expect(runners == ["data-io"])
                // The assertion is the wait: it throws unless three fetches' data reach the state.
                try await waitUntil("three different lastUpdate values in poller/a's state") {
                    Set(watcher.states(of: "poller/a").compactMap { $0["polling"]?["lastUpdate"] }).count >= 3
                }

                let paused = try await cluster.send("poller/a", "pausePolling")
                #expect(paused.caseName == "paused")
                let mark = try await cluster.mark(watcher)

                // Another poller on the same workers ticks three times: poller/a, had it still
                // been armed, would have ticked too.
                try await cluster.send("poller/b", #"{"startPolling":{"interval":0.1}}"#)
                try await waitUntil("poller/b to complete three fetches after the mark") {
                    watcher.events(after: mark).filter { $0.isEffect("poller/b", "completed") }.count >= 3
                }
                let afterPause = watcher.events(after: mark, of: "poller/a")
                #expect(afterPause.isEmpty, "poller/a kept working while paused: \(afterPause)")
                #expect(try await cluster.state("poller/a") == paused)

                // Resume goes on polling; stop ends it.
                #expect(try await cluster.send("poller/a", "resumePolling").caseName == "polling")
                let resumed = try await cluster.mark(watcher)
                try await waitUntil("poller/a to fetch again after resume") {
                    watcher.events(after: resumed).contains { $0.isEffect("poller/a", "completed") }
                }
                #expect(try await cluster.send("poller/a", "stopPolling") == idle)
                #expect(try await cluster.send("poller/b", "stopPolling") == idle)
            }
        }

        @Test func pauseAndStopCancelTheFetchInFlight() async throws {
            // Every fetch takes 1.5 s; the interval is far longer, so only the first fetch runs.
            try await withCluster(Self.topology(ioDelayMs: 1500)) { cluster in
                let watcher = try await cluster.watch(["state:poller/", "effect:poller/"])
                try await cluster.send("poller/p", #"{"startPolling":{"interval":30}}"#)
                try await watcher.waitFor("the first fetch to start") { $0.isEffect("poller/p", "started", id: "poll-fetch") }

                #expect(try await cluster.send("poller/p", "pausePolling").caseName == "paused")
                try await watcher.waitFor("the fetch to be cancelled by pause") { $0.isEffect("poller/p", "cancelled", id: "poll-fetch") }
                try await cluster.waitForLog("io request cancelled", "machine=poller/p")

                // Resume fetches afresh; that fetch started after the cancelled one, so once it
                // delivers, the cancelled one's result would have arrived too.
                #expect(try await cluster.send("poller/p", "resumePolling").caseName == "polling")
                let delivered = try await watcher.waitFor("the resumed fetch to deliver") { event in
                    event.topic == "state:poller/p" && event.state?["polling"]?["lastUpdate"] != nil
                }
                #expect(delivered.count == 1)
                // The fetch across processes, as the coordinator tells it; the tick, a timer on the
                // poller's own worker, as that worker does: armed, cancelled by pause (leaving
                // `polling` ends its state timeout), armed again by resume.
                let fetches = watcher.effects(of: "poller/p").filter { $0.effect == .string("poll-fetch") }.compactMap(\.phase)
                #expect(fetches == ["started", "cancelled", "started", "completed"], "\(fetches)")
                let ticks = watcher.effects(of: "poller/p").filter { $0.effect == .object(["reserved": .string("state-timeout")]) }
                #expect(ticks.compactMap(\.phase) == ["started", "cancelled", "started"], "\(ticks.map(\.description))")
                #expect(ticks.allSatisfy { $0.payload.objectValue?["kind"] == .string("timer") && $0.worker == "edge" },
                        "\(ticks.map(\.description))")

                // Stop while a fetch is in flight cancels it as well.
                try await cluster.send("poller/q", #"{"startPolling":{"interval":30}}"#)
                try await watcher.waitFor("poller/q's fetch to start") { $0.isEffect("poller/q", "started", id: "poll-fetch") }
                #expect(try await cluster.send("poller/q", "stopPolling") == idle)
                try await watcher.waitFor("poller/q's fetch to be cancelled by stop") { $0.isEffect("poller/q", "cancelled", id: "poll-fetch") }
                try await cluster.waitForLog("io request cancelled", "machine=poller/q")

                // poller/p's resumed polling is still armed; a fetch started on poller/r after
                // the stop outlasts poller/q's cancelled one.
                try await cluster.send("poller/r", #"{"startPolling":{"interval":30}}"#)
                try await watcher.waitFor("poller/r's fetch to deliver") { $0.isEffect("poller/r", "completed") }
                #expect(watcher.effects(of: "poller/q", "completed").isEmpty)
                #expect(try await cluster.state("poller/q") == idle)
                #expect(watcher.states(of: "poller/q").last == idle)
            }
        }
    }
}
