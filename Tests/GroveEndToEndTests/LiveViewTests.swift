import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// The live view (docs/ARCHITECTURE.md, "Live view") in a real browser: headless Chromium
    /// opens the URL fsm-launch prints and sees what fsm-send just did.
    // Serialized: one Chromium at a time is plenty for 2 cores shared with the other suites.
    @Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: Browser.missing == nil, Comment(rawValue: Browser.missing ?? "")))
    struct LiveViewTests {
        static let topology = TopologyFile(
            name: "view", transport: .ipc,
            // A fetch that takes an hour unless cancelled: in flight for as long as the test looks.
            workers: [.init(name: "main"), .init(name: "io", arguments: ["--io-delay-ms", "3600000"])],
            machines: [
                .init(name: "auth", type: "AuthFlow", worker: "main"),
                .init(name: "poller", type: "PollingService", worker: "main", keyed: true),
            ],
            io: [(request: "FetchData", worker: "io")],
            view: #"{ "listen": "127.0.0.1:0" }"#
        )

        static func viewURL(_ cluster: Cluster) throws -> String {
            let line = try #require(cluster.launch.stdout.split(separator: "\n").first { $0.hasPrefix("view ") })
            return String(line.dropFirst("view ".count))
        }

        /// Runs `steps` in the browser; once the page is live, `act` (the fsm-send calls).
        static func browse(_ cluster: Cluster, _ steps: [Browser.Step], act: () async throws -> Void = {}) async throws -> [[String: Any]] {
            let ready = cluster.directory.appendingPathComponent("browser-ready")
            let browser = try await Browser.start([.open(try viewURL(cluster)), .ready(ready)] + steps, in: cluster.directory)
            try await waitUntil("the page live in the browser (\(browser.stdout)\(browser.stderr))", timeout: .seconds(60)) { () throws -> Bool in
                if !browser.isRunning, !FileManager.default.fileExists(atPath: ready.path) {
                    throw HarnessError("the browser ended before the page was live: \(browser.stdout)\n\(browser.stderr)")
                }
                return FileManager.default.fileExists(atPath: ready.path)
            }
            try await act()
            let results = await Browser.results(of: browser)
            // A step that failed says what the page received, the browser's stderr, and what
            // fsm-launch (the view and the workers) logged.
            let launched = "\nfsm-launch stderr, last lines:\n" + cluster.log.split(separator: "\n").suffix(40).joined(separator: "\n")
            for result in results where result["ok"] as? Bool != true {
                Issue.record("browser step \(result["step"] ?? "?") failed: \(result["value"] ?? "")\nstderr: \(browser.stderr.suffix(2000))\(launched)")
            }
            #expect(results.count == steps.count + 2, "browser: \(browser.stdout)\n\(browser.stderr.suffix(2000))\(launched)")
            return results
        }

        @Test func theGraphHighlightsTheStateAnFsmSendCaused() async throws {
            try await withCluster(Self.topology) { cluster in
                let url = try Self.viewURL(cluster)
                #expect(url.hasPrefix("http://127.0.0.1:") && url.contains("/?token="))
                let results = try await Self.browse(cluster, [
                    .click(#"tr.machine[data-address="auth"]"#),
                    .wait(#"#graph svg g.node.current[data-node="enteringCredentials"]"#),
                    .text("#recent"),
                ]) {
                    try await cluster.send("auth", "startLogin")
                }
                #expect((results.last?["value"] as? String)?.contains("auth: unauthenticated → enteringCredentials") == true)
            }
        }

        @Test func anIOCallInFlightAppearsAndAnAdminCancelsItFromThePage() async throws {
            try await withCluster(Self.topology) { cluster in
                let row = #"#effects tr[data-address="poller/eu"][data-effect="\"poll-fetch\""]"#
                let results = try await Self.browse(cluster, [
                    .wait(row),
                    .click(row + " button"),
                    .gone(row),
                    .text("#send-result"),
                ]) {
                    try await cluster.send("poller/eu", #"{"startPolling":{"interval":3600}}"#)
                }
                #expect((results.last?["value"] as? String)?.contains("cancelled") == true)
            }
        }

        /// Work the machine's own worker runs is shown too, published by that worker: a poller's
        /// tick (its state timeout, `{"reserved":"state-timeout"}`) shows as a timer with the
        /// time left, and an admin cancels it from the page.
        @Test func aTimerOnTheMachinesOwnWorkerAppearsAndAnAdminCancelsItFromThePage() async throws {
            var topology = Self.topology
            // The fetch runs on the poller's own worker, at once: then only the tick is in flight.
            topology.workers = [.init(name: "main")]
            topology.io = [(request: "FetchData", worker: "main")]
            try await withCluster(topology) { cluster in
                let row = #"#effects tr[data-address="poller/eu"][data-kind="timer"][data-effect='{"reserved":"state-timeout"}']"#
                let results = try await Self.browse(cluster, [
                    .wait(row),
                    .text(row),
                    .click(row + " button"),
                    .gone(row),
                    .text("#send-result"),
                ]) {
                    try await cluster.send("poller/eu", #"{"startPolling":{"interval":3600}}"#)
                }
                let shown = results.count > 3 ? results[3]["value"] as? String ?? "" : ""
                #expect(shown.contains("timer") && shown.contains("fires in 3"), "\(shown)")
                #expect((results.last?["value"] as? String)?.contains("cancelled") == true, "\(results)")
                // Only the tick went: the poller is still polling.
                let state = try await cluster.state("poller/eu")
                #expect(state.objectValue?["polling"] != nil, "\(state)")
            }
        }

        /// With metrics on, the page plots them: events sent while it watches show as a rate
        /// above zero in the events plot, read from the coordinator's own metrics text.
        @Test func withMetricsOnThePagePlotsTheEventsRate() async throws {
            var topology = Self.topology
            topology.metrics = #"{ "listen": "127.0.0.1:0" }"#
            try await withCluster(topology) { cluster in
                let results = try await Self.browse(cluster, [
                    .wait(#"#metrics .plot[data-series="events"][data-last]:not([data-last=""]):not([data-last="0"])"#),
                    .text("#metrics"),
                ]) {
                    // Spread over more than two readings (one every 2 s): each fsm-send is a
                    // process of its own, so 40 of them take longer than that.
                    for index in 0 ..< 40 { _ = try await cluster.send("poller/k\(index % 4)", #"{"startPolling":{"interval":3600}}"#) }
                }
                let text = results.last?["value"] as? String ?? ""
                #expect(text.contains("events/s") && text.contains("transition p99 µs") && text.contains("every 2 s"), "\(text)")
            }
        }

        static let curve = TopologyFile(
            name: "view-curve", transport: .tcp,
            workers: [.init(name: "main")],
            machines: [.init(name: "auth", type: "AuthFlow", worker: "main")],
            security: """
                { "coordinatorKey": "keys/coordinator.key_secret",
                  "clients": [ { "key": "keys/ops.key", "roles": ["read", "send", "admin"] },
                               { "key": "keys/reader.key", "roles": ["read"] } ] }
                """,
            view: #"{ "listen": "127.0.0.1:0" }"#,
            keyPairs: ["coordinator", "ops", "reader"],
            clientKey: "ops"
        )

        /// A read-only key's URL (`fsm-send view`) shows the machines, live, and cannot send:
        /// the page offers no send, and the view refuses one all the same.
        @Test func aReadOnlyKeySeesTheViewButCannotSend() async throws {
            try await withCluster(Self.curve) { cluster in
                let printed = try Self.viewURL(cluster)
                let query = try #require(printed.range(of: "?token="))
                let made = try await cluster.fsmSend(["view", "--url", String(printed[..<query.lowerBound])], as: "reader")
                #expect(made.status == 0, "\(made)")
                let url = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                let send = #"{"address": "auth", "event": "startLogin"}"#
                let browser = try await Browser.start([
                    .open(url),
                    .wait("#connection.up"),
                    .click(#"tr.machine[data-address="auth"]"#),
                    .wait(#"#graph svg g.node.current[data-node="unauthenticated"]"#),
                    .wait("#send-button[disabled]"),
                    .post("/api/send", send),
                ], in: cluster.directory)
                let results = await Browser.results(of: browser)
                #expect(results.count == 6 && results.allSatisfy { $0["ok"] as? Bool == true }, "\(results)\n\(browser.stderr.suffix(2000))")
                let refusal = results.last?["value"] as? String ?? ""
                #expect(refusal.hasPrefix("403 ") && refusal.contains("needs the send role"), "\(refusal)")
                // The launching user's own URL, in the same browser profile-less way, may send.
                let admin = try await Browser.start([.open(printed), .wait("#connection.up"), .post("/api/send", send)], in: cluster.directory)
                let sent = await Browser.results(of: admin).last?["value"] as? String ?? ""
                #expect(sent.hasPrefix("200 ") && sent.contains("enteringCredentials"), "\(sent)")
            }
        }

        @Test func aPageWithoutTheTokenShowsNothing() async throws {
            try await withCluster(Self.topology) { cluster in
                let url = try Self.viewURL(cluster)
                let query = try #require(url.range(of: "?token="))
                let bare = String(url[..<query.lowerBound])
                // A token that is no token is not put into the cookie (it could add attributes).
                let browser = try await Browser.start([.open(bare), .open(bare + "?token=ab;Path=/elsewhere")], in: cluster.directory)
                let results = await Browser.results(of: browser)
                #expect((results.first?["value"] as? String)?.contains("no access token") == true, "\(results)")
                #expect((results.last?["value"] as? String)?.contains("hexadecimal digits and dots") == true, "\(results)")
            }
        }
    }
}
