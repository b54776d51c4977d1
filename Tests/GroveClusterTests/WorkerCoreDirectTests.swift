@testable import GroveCluster
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// What the worker's session core does for its direct route (docs/DIRECT-ROUTES.md, step 3):
/// the coordinator's `access` and `placement` are read, direct traffic never counts as hearing
/// the coordinator, and a worker that stalled past the timeout ends its session before it
/// serves a direct request (each then `moved` `not-registered`, ``DirectCore``).
@Suite(.timeLimit(.minutes(2))) struct WorkerCoreDirectTests {
    let start = ContinuousClock.now

    func welcomed() -> WorkerCore {
        var core = WorkerCore(worker: "edge-1", coordinator: "ipc:///run/test/workers", machineTypes: ["Counter"], now: start)
        let welcome = Welcome(machines: [.init(name: "counter", type: "Counter", keyed: true)], remoteIO: [],
                              heartbeatIntervalMs: 50, heartbeatTimeoutMs: 200, mailboxCapacity: 1000)
        _ = core.welcome(try! WireJSON.encode(welcome), now: start)
        _ = core.tick(now: start)
        return core
    }

    @Test func accessAndPlacementAreReadForTheDirectRoute() throws {
        var core = welcomed()
        let table = ClientTable(clients: [.init(key: String(repeating: "a", count: 40), number: 1, grants: [.init(roles: ["send"])])],
                                suspended: [.init(number: 1, crashes: 2, patterns: ["Counter.add"])])
        #expect(core.decide(Header(.access), payload: try WireJSON.encode(table)[...], now: start) == .access(table))
        let view = PlacementView(generation: 4, handedOff: ["edge-2"])
        #expect(core.decide(Header(.placement), payload: try WireJSON.encode(view)[...], now: start) == .placement(view))
        guard case .act(let actions) = core.decide(Header(.access), payload: Array("{".utf8)[...], now: start) else {
            Issue.record("a malformed access table was not logged")
            return
        }
        #expect(actions.count == 1)
    }

    @Test func directTrafficDoesNotCountAsHearingTheCoordinator() {
        var core = welcomed()
        // Direct requests keep coming, the coordinator says nothing: still silent past the timeout.
        for at in stride(from: 10, through: 300, by: 10) {
            #expect(core.stalled(at: start + .milliseconds(at)) == nil)
            let actions = core.tick(now: start + .milliseconds(at))
            if at > 200 {
                #expect(actions.contains(.closeOutflow), "silent at \(at) ms: the session ends")
                return
            }
        }
        Issue.record("the coordinator's silence was masked by direct traffic")
    }

    @Test func aStalledWorkerEndsItsSessionBeforeServingDirectRequests() {
        var core = welcomed()
        // No tick for longer than the timeout (SIGSTOP): the first direct batch ends the session.
        let woke = core.stalled(at: start + .milliseconds(500))
        #expect(woke?.contains(.closeOutflow) == true, "\(woke ?? [])")
        #expect(!core.isWelcomed)
        // Once over, nothing more to end.
        #expect(core.stalled(at: start + .milliseconds(600)) == nil)
    }
}
