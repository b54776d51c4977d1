@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// How the coordinator loses workers, run through its real driver on an `EmbeddedLoop`
/// (`InMemoryCluster`): silence past the heartbeat timeout, a send that fails, a registration
/// under a name already registered. Time is the loop's own, so every boundary is exact.
@Suite(.timeLimit(.minutes(2)))
struct CoordinatorDriverLossTests {
    @Test func aSilentWorkerIsLostAndTheRequestsWaitingOnItAreAnswered() throws {
        let cluster = InMemoryCluster()
        cluster.registerAll()
        let address = "counter/" + cluster.counterKey(on: "data-1")
        cluster.fromClient("c", .event(address, correlation: 7))
        #expect(cluster.requests(to: "data-1").count == 1)

        // data-1 falls silent (last heard when it registered, at 0 ms); the others keep beating.
        cluster.advance(by: .milliseconds(200), heartbeatsFrom: ["edge", "data-2"])
        #expect(cluster.losses.isEmpty, "silent for exactly the timeout is not yet lost")
        cluster.advance(by: .milliseconds(10), heartbeatsFrom: ["edge", "data-2"])
        #expect(cluster.losses == [.init(worker: "data-1", cause: .silent)])

        let replies = cluster.toClient("c")
        try #require(replies.count == 1, "\(replies)")
        #expect(replies[0].header.correlation == 7)
        #expect(replies[0].wireError?.code == .workerLost)
        #expect(replies[0].address == address)
        let events = cluster.workerEvents()
        #expect(events.map(\.worker) == ["data-1"])
        #expect(events.first?.phase == .lost)
        #expect(events.first?.machines == [address])

        // Its machines are unavailable until it registers again; the others go on.
        cluster.fromClient("c", .event(address, correlation: 8))
        #expect(cluster.toClient("c").map(\.wireError?.code) == [.unavailable])
        cluster.fromClient("c", .event("counter/" + cluster.counterKey(on: "data-2"), correlation: 9))
        #expect(cluster.requests(to: "data-2").map(\.header.kind) == [.event])
        cluster.register("data-1")
        cluster.fromClient("c", .event(address, correlation: 10))
        #expect(cluster.requests(to: "data-1").map(\.header.kind) == [.event])
    }

    @Test func aWorkerThatCannotBeReachedIsLost() throws {
        let cluster = InMemoryCluster()
        cluster.registerAll()
        cluster.loop.disconnect(Array("data-2".utf8), on: cluster.workers)
        let address = "counter/" + cluster.counterKey(on: "data-2")

        // The forward fails after the turn that sent it: the loop reports it, the driver loses the worker.
        cluster.fromClient("c", .event(address, correlation: 3))
        #expect(cluster.losses == [.init(worker: "data-2", cause: .unreachable)])
        let replies = cluster.toClient("c")
        #expect(replies.map(\.header.correlation) == [3])
        #expect(replies.map(\.wireError?.code) == [.workerLost])
        let events = cluster.workerEvents()
        #expect(events.map(\.phase) == [.lost])
        #expect(events.first?.reason?.contains("unreachable") == true, "\(events)")
        #expect(cluster.requests(to: "data-2").isEmpty)

        // Nobody else is affected.
        cluster.fromClient("c", .event("counter/" + cluster.counterKey(on: "data-1"), correlation: 4))
        #expect(cluster.requests(to: "data-1").map(\.header.correlation).count == 1)
        #expect(cluster.losses.count == 1)
    }

    @Test func aWorkerRegisteringAgainTakesOverItsNameAndTheOldRequestsAreAnswered() throws {
        let cluster = InMemoryCluster()
        cluster.register("edge", pid: 101)
        cluster.register("data-1")
        cluster.register("data-2")
        _ = cluster.published()
        cluster.fromClient("c", .event("auth", correlation: 1))
        let old = cluster.requests(to: "edge")
        try #require(old.count == 1)

        // Another process claims the name while the first still counts as alive.
        let answer = cluster.register("edge", pid: 102)
        #expect(answer.map(\.header.kind).contains(.welcome), "\(answer)")
        #expect(cluster.losses == [.init(worker: "edge", cause: .registeredAgain)])
        #expect(cluster.toClient("c").map(\.wireError?.code) == [.workerLost])
        #expect(cluster.workerEvents().map(\.phase) == [.lost, .registered])
        #expect(cluster.warnings.contains { $0.contains("claimed by pid 102 while pid 101") }, "\(cluster.warnings)")

        // A late reply to the old registration's request is not passed on: nobody waits for it.
        cluster.fromWorker("edge", old[0].stateReply(#"{"old":true}"#))
        #expect(cluster.toClient("c").isEmpty)

        // The new registration is served, under a new id.
        cluster.fromClient("c", .event("auth", correlation: 2))
        let new = cluster.requests(to: "edge")
        try #require(new.count == 1)
        #expect(new[0].header.correlation != old[0].header.correlation)
        cluster.fromWorker("edge", new[0].stateReply(#"{"new":true}"#))
        let replies = cluster.toClient("c")
        #expect(replies.map(\.header.correlation) == [2])
        #expect(replies.map(\.text) == [#"{"new":true}"#])
    }

    @Test func theSameProcessRegisteringAgainIsNotWarnedAbout() {
        let cluster = InMemoryCluster()
        cluster.registerAll()
        cluster.register("edge")  // same pid: a reconnection, not a second process
        #expect(cluster.losses == [.init(worker: "edge", cause: .registeredAgain)])
        #expect(!cluster.warnings.contains { $0.contains("claimed by pid") }, "\(cluster.warnings)")
    }

    @Test func aRegistrationUnderAnUnknownNameIsRefused() throws {
        let cluster = InMemoryCluster()
        let answer = cluster.register("ghost")
        try #require(answer.count == 1, "\(answer)")
        #expect(answer[0].wireError?.code == .registrationRejected)
        #expect(answer[0].wireError?.message.contains("known workers: edge, data-1, data-2") == true, "\(answer[0].text)")
        #expect(cluster.workerEvents().isEmpty)
        #expect(cluster.driver.ready.withLock { $0.missing } == ["data-1", "data-2", "edge"])

        // It is not registered: what it sends next is refused with what to do.
        cluster.fromWorker("ghost", WireMessage(Header(.heartbeat), address: "ghost"))
        #expect(cluster.toWorker("ghost").map(\.wireError?.code) == [.unavailable])
        #expect(cluster.losses.isEmpty)
    }

    @Test func idleWorkersThatHeartbeatAtTheTopologysSettingsAreNeverLost() throws {
        let cluster = InMemoryCluster()  // heartbeat 50 ms, timeout 200 ms
        let workers = ["edge", "data-1", "data-2"]
        let answer = cluster.register("edge")
        let welcome = try WireJSON.decode(Welcome.self, from: try #require(answer.first { $0.header.kind == .welcome }).payload)
        #expect((welcome.heartbeatIntervalMs, welcome.heartbeatTimeoutMs) == (50, 200))
        cluster.register("data-1")
        cluster.register("data-2")
        _ = cluster.published()

        cluster.advance(by: .seconds(5), heartbeatsFrom: workers)
        #expect(cluster.losses.isEmpty)
        #expect(cluster.workerEvents().isEmpty)
        // The coordinator beats too, every 50 ms of its clock: ticks every 10 ms from 10 ms on,
        // a heartbeat at the first and then every fifth, 100 in 5 s.
        for worker in workers {
            #expect(cluster.toWorker(worker).unbatched.filter { $0.header.kind == .heartbeat }.count == 100, "\(worker)")
        }

        // One stops: lost one tick after the timeout, not before.
        cluster.advance(by: .milliseconds(200), heartbeatsFrom: ["edge", "data-1"])
        #expect(cluster.losses.isEmpty)
        cluster.advance(by: .milliseconds(10), heartbeatsFrom: ["edge", "data-1"])
        #expect(cluster.losses == [.init(worker: "data-2", cause: .silent)])
    }
}
