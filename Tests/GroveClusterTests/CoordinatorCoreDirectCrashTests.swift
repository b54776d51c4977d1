import Foundation
@testable import GroveCluster
@testable import GroveCoordinator
@_spi(GroveInternal) import GroveWire
import Testing

/// Crash containment for requests that came on a worker's direct route (docs/DIRECT-ROUTES.md
/// 2.7): the coordinator never saw them, so a crash report is counted only when fsm-launch saw
/// the process exit, and against the key its request id names only when that key may send there.
@Suite("Coordinator core: crashes on the direct route", .timeLimit(.minutes(2)))
struct CoordinatorCoreDirectCrashTests {
    static let mallory = String(repeating: "M", count: 40)
    static let reader = String(repeating: "R", count: 40)

    /// A fixture whose topology's client keys are admitted: `mallory` may send to counters,
    /// `reader` may only read them.
    static func fixture() -> CoreFixture {
        var fixture = CoreFixture()
        fixture.registerAll()
        _ = fixture.core.admitClients([
            (mallory, [.init(key: "m.key", roles: [.send], machines: ["counter*"])]),
            (reader, [.init(key: "r.key", roles: [.read], machines: ["counter*"])]),
        ])
        return fixture
    }

    /// Worker `worker`'s process dies running a direct request `id` at `address`; fsm-launch saw
    /// it exit when `sawExit`; its next process registers with the report.
    static func crash(_ fixture: inout CoreFixture, _ worker: String, direct id: UInt64, at address: String, sawExit: Bool,
                      incarnation: UInt64) -> [String] {
        let oldPID = fixture.core.workers[worker]!.pid!
        if sawExit { fixture.core.noteExit(of: worker, pid: oldPID, blamesEvent: true) }
        _ = fixture.core.lose(worker, reason: sawExit ? "process killed by signal 4" : "no heartbeat", cause: sawExit ? .exited : .silent)
        var registration = CoreFixture.registration(worker)
        registration.pid = Int32(400 + incarnation)
        registration.incarnation = incarnation
        registration.startedAtMs = Int64(incarnation)
        registration.crash = CrashReport(address: address, type: "Counter", event: "add", origin: "sent", correlation: id)
        return fixture.register(registration).compactMap { if case .warn(let text) = $0 { text } else { nil } }
    }

    static func key(on worker: String, in fixture: CoreFixture) -> String {
        let keys: [String] = (1...100).map { "d-\($0)" }
        let key: String = keys.first(where: { fixture.core.topology.placement(ofMachine: "counter", key: $0) == worker }) ?? ""
        return "counter/" + key
    }

    @Test func aDirectIdCarriesItsSenderAndNoCoordinatorEpochIsDirect() {
        let id = DirectRequestID.make(sender: 7, sequence: 12_345)
        #expect(DirectRequestID.isDirect(id))
        #expect(DirectRequestID.sender(of: id) == 7)
        #expect(DirectRequestID.sender(of: DirectRequestID.make(sender: 0, sequence: 1)) == nil)
        #expect(DirectRequestID.sender(of: DirectRequestID.make(sender: DirectRequestID.largestSender + 1, sequence: 1)) == nil)
        // The sequence wraps inside its bits: the sender's number is never overwritten.
        #expect(DirectRequestID.sender(of: DirectRequestID.make(sender: 3, sequence: DirectRequestID.sequenceMask + 5)) == 3)
        for _ in 0..<1000 {
            #expect(!DirectRequestID.isDirect(CorrelationEpoch.random().id(UInt64.random(in: 1...CorrelationEpoch.counterMask))))
        }
    }

    @Test func aWitnessedCrashIsCountedAgainstTheKeyItsIdNames() throws {
        var fixture = Self.fixture()
        let number = fixture.core.containment.number(ofSender: Self.mallory)
        let address = Self.key(on: "data-1", in: fixture)
        let warnings = Self.crash(&fixture, "data-1", direct: DirectRequestID.make(sender: number, sequence: 9), at: address,
                                  sawExit: true, incarnation: 11).joined(separator: "\n")
        #expect(warnings.contains("crash 1 of Counter.add"), "\(warnings)")
        #expect(warnings.contains("crash 1 of client key \(Self.mallory)"), "\(warnings)")
    }

    @Test func aCrashFsmLaunchDidNotSeeIsNotCounted() throws {
        var fixture = Self.fixture()
        let number = fixture.core.containment.number(ofSender: Self.mallory)
        let address = Self.key(on: "data-1", in: fixture)
        let warnings = Self.crash(&fixture, "data-1", direct: DirectRequestID.make(sender: number, sequence: 9), at: address,
                                  sawExit: false, incarnation: 12).joined(separator: "\n")
        #expect(warnings.contains("from its direct route, but fsm-launch did not see its process exit; not counted"), "\(warnings)")
        #expect(fixture.core.containment.ledger.suspended.isEmpty)
    }

    /// A worker naming a key that may not send there (to blame a reader) counts the crash for
    /// its pattern only.
    @Test func aKeyThatMayNotSendThereIsNotBlamed() throws {
        var fixture = Self.fixture()
        let number = fixture.core.containment.number(ofSender: Self.reader)
        let address = Self.key(on: "data-1", in: fixture)
        let warnings = Self.crash(&fixture, "data-1", direct: DirectRequestID.make(sender: number, sequence: 9), at: address,
                                  sawExit: true, incarnation: 13).joined(separator: "\n")
        #expect(warnings.contains("crash 1 of Counter.add"), "\(warnings)")
        #expect(!warnings.contains(Self.reader), "\(warnings)")
        #expect(warnings.contains("its sender is not known"), "\(warnings)")
    }
}
