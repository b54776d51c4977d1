import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// Issue 34, the superseded race: fsm-launch restarted a worker while a registration its old
/// process sent before dying was still on its way. Read after the exit, that registration took
/// the name for a dead process: heartbeats naming it reached the new process, which stopped
/// with exit 78, a final status, and the supervisor gave up. The coordinator now retires the
/// incarnation of a process its launcher saw end.
@Suite("Coordinator core: a dead process's late registration", .timeLimit(.minutes(2)))
struct CoordinatorCoreSupersededRaceTests {
    static func registration(incarnation: UInt64, pid: Int32) -> Registration {
        var registration = CoreFixture.registration("edge")
        registration.incarnation = incarnation
        registration.startedAtMs = Int64(incarnation)
        registration.pid = pid
        return registration
    }

    @Test func aRegistrationReadAfterItsProcessExitedIsRefusedAndItsSuccessorWelcomed() throws {
        var fixture = CoreFixture()
        _ = fixture.register(Self.registration(incarnation: 1, pid: 101), correlation: 1)
        #expect(fixture.core.workers["edge"]?.registered == true)
        // fsm-launch saw pid 101 exit; the coordinator loses it.
        fixture.core.noteExit(of: "edge", pid: 101, blamesEvent: true)
        _ = fixture.core.lose("edge", reason: "process killed by signal 9", cause: .exited)

        // What pid 101 sent before it died, read now: refused, not registered.
        let late = fixture.register(Self.registration(incarnation: 1, pid: 101), correlation: 1)
        #expect(!late.compactMap(\.sentToWorker).contains { $0.message.header.kind == .welcome }, "\(late)")
        let refusal = try #require(late.compactMap(\.sentToWorker).first { $0.message.header.kind == .error })
        #expect(refusal.message.header.correlation == 1, "answers that registration, so only its sender acts on it")
        let error = try payload(WireError.self, of: refusal.message)
        #expect(error.code == .superseded)
        #expect(error.message.contains("its process (pid 101) ended"), "\(error.message)")
        #expect(fixture.core.workers["edge"]?.registered == false)
        #expect(fixture.core.heartbeat(for: "edge").payload.isEmpty, "no heartbeat names the dead process")

        // The successor fsm-launch started registers and is welcomed.
        let successor = fixture.register(Self.registration(incarnation: 2, pid: 102), correlation: 2)
        let welcome = try #require(successor.compactMap(\.sentToWorker).first { $0.message.header.kind == .welcome })
        #expect(try payload(Welcome.self, of: welcome.message).incarnation == 2)
        #expect(fixture.core.workers["edge"]?.pid == 102)
    }

    @Test func theExitOfAProcessThatIsNotTheRegisteredOneRetiresNothing() {
        var fixture = CoreFixture()
        _ = fixture.register(Self.registration(incarnation: 1, pid: 101), correlation: 1)
        fixture.core.noteExit(of: "edge", pid: 999, blamesEvent: true)
        let again = fixture.register(Self.registration(incarnation: 1, pid: 101), correlation: 1)
        #expect(again.compactMap(\.sentToWorker).contains { $0.message.header.kind == .welcome }, "the same live process: \(again)")
    }
}
