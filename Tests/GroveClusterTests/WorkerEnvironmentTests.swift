import GroveCluster
import GroveClient
import GroveCoordinator
import GroveWorker
import Testing

/// The environment fsm-launch gives its workers: Swift's backtracer set to end a trapped worker
/// fast, unless whoever started fsm-launch chose a setting.
@Suite(.timeLimit(.minutes(2)))
struct WorkerEnvironmentTests {
    @Test func aWorkerGetsTheFastBacktracerWhenTheEnvironmentSetsNone() {
        let spawned = WorkerEnvironment.spawning(from: ["PATH": "/usr/bin", "HOME": "/root"])
        #expect(spawned == ["PATH": "/usr/bin", "HOME": "/root", "SWIFT_BACKTRACE": WorkerEnvironment.backtrace])
    }

    @Test func aSettingOfTheUsersIsKept() {
        #expect(WorkerEnvironment.spawning(from: ["SWIFT_BACKTRACE": "enable=yes"])["SWIFT_BACKTRACE"] == "enable=yes")
        #expect(WorkerEnvironment.spawning(from: ["SWIFT_BACKTRACE": ""])["SWIFT_BACKTRACE"] == "",
                "set, even empty: Swift's defaults, as the user asked")
    }
}
