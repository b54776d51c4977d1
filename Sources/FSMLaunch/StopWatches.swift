import GroveCluster
import Logging
import ServiceLifecycle

/// A worker group gave up and its supervision escalates (`supervision.onGiveUp`): fsm-launch
/// stops everything and exits non-zero.
struct Escalation: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}

/// Throws the first ``Escalation`` the supervisor reports, which makes fsm-launch's group shut
/// down and `run()` throw it; ends quietly on a graceful shutdown.
struct EscalationWatch: Service {
    let escalations: AsyncStream<String>

    func run() async throws {
        for await reason in escalations.cancelOnGracefulShutdown() {
            throw Escalation(reason: reason)
        }
    }
}

/// Ends when the process that started fsm-launch has ended (`--exit-with-parent`), which shuts
/// the group down as SIGTERM would; ends quietly on a graceful shutdown.
struct ParentWatch: Service {
    let parent: ParentProcess
    let log: Logger

    func run() async {
        await cancelWhenGracefulShutdown { await parent.waitUntilGone() }
        if parent.isGone { log.notice("the launching process is gone; stopping the topology") }
    }
}
