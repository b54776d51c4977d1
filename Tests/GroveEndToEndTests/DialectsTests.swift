import Foundation
import GroveWire
import Testing

extension EndToEnd {
    /// One machine of each dialect on one worker, driven by fsm-send (Topologies/dialects.json):
    /// Oak's `Transducer` (LoginFlow), a SwiftTea program whose fetch crosses to the io worker
    /// (DebouncedSearch), a StateMachinePackage program (LoadingStateMachine) and a TCA-SM feature
    /// whose IO effect crosses too (SearchFeature). Over ipc.
    @Suite(.timeLimit(.minutes(2)))
    struct DialectsTests {
        static let topology = TopologyFile(
            name: "dialects", transport: .runtimeDirectory,
            workers: [.init(name: "dialects"), .init(name: "data-io")],
            machines: [.init(name: "login", type: "LoginFlow", worker: "dialects", keyed: true, onEnd: "remove"),
                       .init(name: "typeahead", type: "DebouncedSearch", worker: "dialects", keyed: true, onEnd: "remove"),
                       .init(name: "loader", type: "LoadingStateMachine", worker: "dialects", keyed: true, onEnd: "remove"),
                       .init(name: "search", type: "SearchFeature", worker: "dialects", keyed: true, onEnd: "remove"),
                       .init(name: "retry", type: "RetryingFeature", worker: "dialects", keyed: true, onEnd: "remove"),
                       .init(name: "tracker", type: "LocationTracker", worker: "dialects", keyed: true, onEnd: "remove"),
                       .init(name: "app", type: "AppFeature", worker: "dialects", keyed: true, onEnd: "remove"),
                       .init(name: "user", type: "UserFeature", worker: "dialects", keyed: true, onEnd: "remove"),
                       .init(name: "purchase", type: "PurchaseFeature", worker: "dialects", keyed: true, onEnd: "remove"),
                       .init(name: "posts", type: "UserPostsFeature", worker: "dialects", keyed: true, onEnd: "remove"),
                       .init(name: "cache", type: "CacheFeature", worker: "dialects", keyed: true, onEnd: "remove"),
                       .init(name: "authenticate", type: "AuthenticateFeature", worker: "dialects", keyed: true, onEnd: "remove"),
                       .init(name: "poller", type: "PollingLoop", worker: "dialects", keyed: true, onEnd: "remove"),
                       .init(name: "network", type: "NetworkFeature", worker: "dialects", keyed: true, onEnd: "remove"),
                       .init(name: "fetch", type: "RetryableFetch", worker: "dialects", keyed: true, onEnd: "remove"),
                       .init(name: "session", type: "SessionFeature", worker: "dialects", keyed: true, onEnd: "remove"),
                       .init(name: "reducer", type: "NetworkReducer", worker: "dialects", keyed: true, durability: "state"),
                       .init(name: "reducer-journal", type: "NetworkReducer", worker: "dialects", keyed: true, durability: "journal"),
                       .init(name: "awaiting-loader", type: "AwaitingLoadingStateMachine", worker: "dialects", keyed: true,
                             durability: "journal")],
            io: [("FetchItems", "data-io"), ("SearchTitles", "data-io"), ("SessionWork", "data-io")]
        )

        @Test func oneMachineOfEachDialectRunsOnTheWorker() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["state:", "effect:typeahead", "effect:search"])

                // Oak: seed 001's effect-free LoginFlow.
                #expect(try await cluster.send("login/a", "startLogin")
                        == json(#"{"enteringCredentials":{"email":"","password":""}}"#))

                // SwiftTea: the keystroke waits for a pause (.after), then the fetch runs as .io
                // on the worker serving FetchItems.
                let typed = try await cluster.send("typeahead/a", #"{"queryChanged":{"_0":"oa"}}"#)
                #expect(typed == json(#"{"query":"oa","isPending":true,"matches":[],"searches":0}"#))
                let found = try await cluster.waitForState("typeahead/a", "searched") { $0["isPending"] == json("false") }
                #expect(found == json(#"{"query":"oa","isPending":false,"matches":[{"id":"1","title":"Oak"}],"searches":1}"#))
                let fetched = try await watcher.waitFor("the fetch to complete") { $0.isEffect("typeahead/a", "completed", id: "fetch") }
                #expect(fetched.first?.worker == "data-io", "the fetch ran on \(fetched.first?.worker ?? "none")")

                // StateMachinePackage: the side effect's event comes back; a failure can be retried.
                #expect(try await cluster.send("loader/a", #"{"loadingWasRequested":{"id":"3"}}"#) == json(#"{"loading":{}}"#))
                try await cluster.waitForState("loader/a", "loaded") { $0 == json(#"{"loaded":{"value":30}}"#) }
                // `sameState()`: unhandled, the state stays.
                #expect(try await cluster.send("loader/a", #"{"loadingWasRequested":{"id":"5"}}"#) == json(#"{"loaded":{"value":30}}"#))
                // Seed 003's own spelling of the request is read too.
                try await cluster.send("loader/b", #"{"loadingwasRequested":{"id":"three"}}"#)
                let failed = try await cluster.waitForState("loader/b", "failed") { $0.caseName == "failed" }
                #expect(failed["failed"]?["message"]?.stringValue?.contains("'three'") == true, "\(failed)")
                try await cluster.send("loader/b", #"{"loadingWasRequested":{"id":"4"}}"#)
                try await cluster.waitForState("loader/b", "loaded") { $0 == json(#"{"loaded":{"value":40}}"#) }

                // TCA-SM: seed 004's search, its IO effect run by the feature's instance on the io
                // worker; clear cancels by leaving `loading`.
                #expect(try await cluster.send("search/a", #"{"input":{"_0":{"search":{"_0":"oak"}}}}"#)
                        == json(#"{"loading":{"query":"oak"}}"#))
                try await cluster.waitForState("search/a", "loaded") { $0 == json(#"{"loaded":{"_0":["Oak","Oakmoss"]}}"#) }
                let searched = try await watcher.waitFor("the search to complete") { $0.isEffect("search/a", "completed", id: "io-effect") }
                #expect(searched.first?.worker == "data-io", "the search ran on \(searched.first?.worker ?? "none")")
                #expect(try await cluster.send("search/a", #"{"input":{"_0":{"clear":{}}}}"#) == json(#"{"idle":{}}"#))

                try await watcher.waitFor("search/a's last change") { $0.topic == "state:search/a" && $0.state == json(#"{"idle":{}}"#) }
                let changes = watcher.events(where: { $0.topic.hasPrefix("state:") && $0.topic != "state:probe" })
                let addresses = Set(changes.map(\.topic))
                let workers = Set(changes.compactMap(\.worker))
                #expect(addresses == ["state:login/a", "state:typeahead/a", "state:loader/a", "state:loader/b", "state:search/a"])
                #expect(workers == ["dialects"], "every dialect's machine runs on the dialects worker: \(workers)")
            }
        }

        /// The other shipped SwiftTea and TCA-SM examples, hosted by fsm-worker with its demo
        /// services: RetryingFeature's retries, LocationTracker's stream, AppFeature's sequence
        /// and its user feature, UserFeature alone.
        @Test func theOtherDialectExamplesRunOnTheWorker() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["state:retry/"])

                // TCA-SM: the demo service fails twice, then answers; each failure is a retry.
                #expect(try await cluster.send("retry/a", #"{"input":{"_0":{"start":{}}}}"#) == json(#"{"active":{"retryCount":0}}"#))
                try await cluster.waitForState("retry/a", "loaded") { $0 == json(#"{"loaded":{"_0":"the third time lucky"}}"#) }
                let retries = try await watcher.waitFor("both retries", count: 2) { $0.state?["active"] != nil && $0.state != json(#"{"active":{"retryCount":0}}"#) }
                #expect(retries.compactMap(\.state) == [json(#"{"active":{"retryCount":1}}"#), json(#"{"active":{"retryCount":2}}"#)])

                // SwiftTea: a stream effect on the worker delivers the demo's three fixes; stopping ends it.
                #expect(try await cluster.send("tracker/a", #"{"startLocationUpdates":{}}"#) == json(#"{"isTracking":true,"updateCount":0}"#))
                try await cluster.waitForState("tracker/a", "three fixes in") { $0["updateCount"] == json("3") }
                let stopped = try await cluster.send("tracker/a", #"{"stopLocationUpdates":{}}"#)
                #expect(stopped["isTracking"] == json("false") && stopped["updateCount"] == json("3"), "\(stopped)")

                // SwiftTea: the app loads its preferences, then signs Ada in through its user feature.
                try await cluster.send("app/a", #"{"initializeApp":{}}"#)
                try await cluster.waitForState("app/a", "initialized") { $0["preferences"] == json(#"{"theme":"system","notifications":true}"#) }
                try await cluster.send("app/a", #"{"user":{"_0":{"login":{"email":"ada@example.com","password":"analytical"}}}}"#)
                let signedIn = try await cluster.waitForState("app/a", "signed in") { $0["user"]?["currentUser"] != nil }
                #expect(signedIn["user"]?["currentUser"]?["name"] == json(#""Ada Lovelace""#), "\(signedIn)")

                // SwiftTea: the user feature alone, refused.
                #expect(try await cluster.send("user/a", #"{"login":{"email":"ada@example.com","password":"wrong"}}"#)
                        == json(#"{"isLoggingIn":true}"#))
                try await cluster.waitForState("user/a", "refused") { $0 == json(#"{"isLoggingIn":false,"errorMessage":"wrong email or password"}"#) }
            }
        }

        /// Seed 004's other examples, ported to GroveExamples: the purchase decided in the reducer,
        /// the phases walked with the mock's results, the cache decision, the orchestrated sign-in.
        @Test func seed004ExamplesRunOnTheWorker() async throws {
            try await withCluster(Self.topology) { cluster in
                #expect(try await cluster.send("purchase/a", #"{"input":{"_0":{"purchase":{}}}}"#)
                        == json(#"{"points":70,"showInsufficientPointsAlert":false,"isPurchasing":true,"purchases":0}"#))
                try await cluster.waitForState("purchase/a", "bought") { $0["purchases"] == json("1") }

                try await cluster.send("posts/a", #"{"input":{"_0":{"start":{"email":"ada@example.com","password":"analytical"}}}}"#)
                let complete = try await cluster.waitForState("posts/a", "complete") { $0.caseName == "complete" }
                #expect(complete["complete"]?["posts"] == json(#"[{"title":"Notes on the Analytical Engine"},{"title":"Sketch of the Engine"}]"#))

                try await cluster.send("cache/a", #"{"input":{"_0":{"load":{}}}}"#)
                try await cluster.waitForState("cache/a", "loaded") { $0["cacheValid"] == json("true") }
                #expect(try await cluster.send("cache/a", #"{"input":{"_0":{"load":{}}}}"#)
                        == json(#"{"phase":{"loaded":{"_0":"the latest headlines"}},"cacheValid":true,"cachedData":"the latest headlines"}"#))

                try await cluster.send("authenticate/a", #"{"input":{"_0":{"signIn":{"username":"ada@example.com","password":"analytical"}}}}"#)
                let signedIn = try await cluster.waitForState("authenticate/a", "signed in") { $0.caseName == "signedIn" }
                #expect(signedIn["signedIn"]?["_0"]?["name"] == json(#""Ada Lovelace""#), "\(signedIn)")
            }
        }

        /// Oak's `EffectTransducer`: seed 000's polling loop, its effect a closure that loops.
        @Test func oakEffectTransducerRunsOnTheWorker() async throws {
            try await withCluster(Self.topology) { cluster in
                // Oak EffectTransducer: the loop's first tick fetches at once; the update is stamped
                // with the worker's clock (a Date: seconds since 2001). An hour's interval: no
                // second tick during the test.
                let before = Date().timeIntervalSinceReferenceDate
                #expect(try await cluster.send("poller/a", #"{"startPolling":{"interval":3600}}"#) == json(#"{"polling":{"interval":3600}}"#))
                let updated = try await cluster.waitForState("poller/a", "updated") { $0["polling"]?["lastUpdate"] != nil }
                let stamp = try #require(seconds(updated["polling"]?["lastUpdate"]), "\(updated)")
                #expect(stamp >= before - 1 && stamp <= Date().timeIntervalSinceReferenceDate + 1, "stamped \(stamp), the test began at \(before)")
                #expect(updated == json(#"{"polling":{"interval":3600,"lastUpdate":\#(updated["polling"]!["lastUpdate"]!)}}"#))
                let paused = try await cluster.send("poller/a", "pausePolling")
                #expect(paused == json(#"{"paused":{"interval":3600,"lastUpdate":\#(updated["polling"]!["lastUpdate"]!)}}"#))
                #expect(try await cluster.send("poller/a", "stopPolling") == json(#"{"idle":{}}"#))
                let refused = try await cluster.fsmSend(["send", "poller/b", #"{"startPolling":{"interval":0}}"#])
                #expect(refused.status == 2 && refused.stderr.contains("invalid-event"), "Oak forwards the refusal: \(refused)")
            }
        }

        /// Seed 002's SwiftTea examples brought from its text: Result-based actions, `retryable`,
        /// and the logout that cancels three background operations running on the io worker.
        @Test func seed002ExamplesRunOnTheWorker() async throws {
            try await withCluster(Self.topology) { cluster in
                let watcher = try await cluster.watch(["effect:session/"])

                // SwiftTea, Result-based: the fetch's success and a failure sent in arrive as one action.
                #expect(try await cluster.send("network/a", "fetchData") == json(#"{"isLoading":true}"#))
                try await cluster.waitForState("network/a", "loaded") { $0 == json(#"{"isLoading":false,"data":"dGhlIGxhdGVzdCBuZXdz"}"#) }
                let failed = try await cluster.send("network/a", #"{"dataFetched":{"_0":{"failure":{"_0":{"message":"offline"}}}}}"#)
                #expect(failed == json(#"{"isLoading":false,"data":"dGhlIGxhdGVzdCBuZXdz","error":{"message":"offline"}}"#))

                // SwiftTea, retryable: two failed attempts inside the effect, the third fetches.
                #expect(try await cluster.send("fetch/a", #"{"fetch":{"failingAttempts":2}}"#) == json(#"{"isLoading":true}"#))
                try await cluster.waitForState("fetch/a", "fetched") { $0 == json(#"{"isLoading":false,"document":"fetched on attempt 3"}"#) }

                // SwiftTea, conditional cancellation: signing in starts three operations on the io
                // worker; signing out cancels all three.
                #expect(try await cluster.send("session/a", "userLoggedIn") == json(#"{"isAuthenticated":true,"finished":[]}"#))
                let started = try await watcher.waitFor("the three operations to start", count: 3) { $0.isEffect("session/a", "started") }
                #expect(Set(started.compactMap(\.effect)) == [json(#""user-data-sync""#), json(#""notification-stream""#), json(#""analytics-upload""#)])
                #expect(Set(started.compactMap(\.worker)) == ["data-io"])
                #expect(try await cluster.send("session/a", "userLoggedOut") == json(#"{"isAuthenticated":false,"finished":[]}"#))
                let cancelled = try await watcher.waitFor("the three operations to be cancelled", count: 3) { $0.isEffect("session/a", "cancelled") }
                #expect(Set(cancelled.compactMap(\.effect)) == Set(started.compactMap(\.effect)))
                #expect(watcher.effects(of: "session/a", "completed").isEmpty)
            }
        }

        /// Seed 002's free reducer `networkReducer`, registered as it is (a Store's arguments), with
        /// durability `state` and `journal`, and seed 003's loader with a transition that awaits
        /// (`journal`): each instance is back in its exact state after a kill -9 of its worker,
        /// and runs on.
        @Test func aFreeReducerAndAnAwaitingTransitionRunOnTheWorkerAndComeBackAfterItsKill() async throws {
            try await withCluster(Self.topology) { cluster in
                // StateMachinePackage, a transition that awaits: answered in its turn with the
                // state before and the request in transition; the load's result commits later.
                #expect(try await cluster.send("awaiting-loader/a", #"{"loadingWasRequested":{"id":"3"}}"#)
                        == json(#"{"state":{"idle":{}},"inTransition":{"loadingWasRequested":{"id":"3"}},"waiting":[],"started":1}"#))
                let loadedValue = json(#"{"state":{"loaded":{"value":30}},"waiting":[],"started":1}"#)
                try await cluster.waitForState("awaiting-loader/a", "loaded") { $0 == loadedValue }
                // The machine's own steps are not a client's to send.
                let forged = try await cluster.fsmSend(["send", "awaiting-loader/a", #"{"$restarted":true}"#])
                #expect(forged.status == 2 && forged.stderr.contains("invalid-event"), "\(forged)")
                // Seed 003's own spelling; the demo loader fails on a name, and the failure commits.
                try await cluster.send("awaiting-loader/b", #"{"loadingwasRequested":{"id":"three"}}"#)
                let failedLoad = try await cluster.waitForState("awaiting-loader/b", "failed") { $0["state"]?.caseName == "failed" }
                #expect(failedLoad["state"]?["failed"]?["message"]?.stringValue?.contains("'three'") == true, "\(failedLoad)")

                let loaded = json(#"{"isLoading":false,"data":"dGhlIGxhdGVzdCBuZXdz"}"#)
                let failed = json(#"{"isLoading":false,"data":"dGhlIGxhdGVzdCBuZXdz","error":{"message":"offline"}}"#)
                let addresses = ["reducer/a", "reducer-journal/a"]
                for address in addresses {
                    #expect(try await cluster.send(address, "fetchData") == json(#"{"isLoading":true}"#))
                    try await cluster.waitForState(address, "loaded") { $0 == loaded }
                    #expect(try await cluster.send(address, #"{"dataFetched":{"_0":{"failure":{"_0":{"message":"offline"}}}}}"#) == failed)
                }

                try await cluster.killAndAwaitRestart("dialects", timeout: .seconds(20))
                #expect(try await cluster.state("awaiting-loader/a") == loadedValue)
                #expect(try await cluster.state("awaiting-loader/b") == failedLoad)
                // From `failed`, a new request loads.
                try await cluster.send("awaiting-loader/b", #"{"loadingWasRequested":{"id":"4"}}"#)
                try await cluster.waitForState("awaiting-loader/b", "loaded after the kill") {
                    $0 == json(#"{"state":{"loaded":{"value":40}},"waiting":[],"started":2}"#)
                }
                for address in addresses {
                    #expect(try await cluster.state(address) == failed, "\(address) after the kill")
                    #expect(try await cluster.send(address, "fetchData") == json(#"{"isLoading":true,"data":"dGhlIGxhdGVzdCBuZXdz"}"#))
                    try await cluster.waitForState(address, "loaded again") { $0 == loaded }
                }
            }
        }

        /// A JSON number's value.
        func seconds(_ value: JSONValue?) -> Double? {
            switch value {
            case .number(let number): number
            case .integer(let integer): Double(integer)
            default: nil
            }
        }
    }
}
