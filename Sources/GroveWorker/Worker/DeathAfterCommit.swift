import Foundation

/// A test hook, off unless its variable is set: with `GROVE_TEST_DIE_AFTER_COMMIT=FILE` in a
/// worker's environment, the worker kills itself (`SIGKILL`) right after a group commit that
/// kept the answers of events sent with an idempotency key, and before that turn's replies
/// leave, each time `FILE` exists when such a commit lands (the worker deletes it first, so one
/// file is one death). Those events are then applied and committed and their senders hear
/// nothing: the case a retry with the same key must not apply twice, made certain
/// (`RetryTests`) rather than left to where a `kill -9` happens to land. Not for production:
/// nothing else reads the variable.
struct DeathAfterCommit: Sendable {
    static let variable = "GROVE_TEST_DIE_AFTER_COMMIT"
    /// The hook as this process's environment sets it, read once.
    static let process = DeathAfterCommit(environment: ProcessInfo.processInfo.environment)

    /// The file whose presence asks for a death; nil when the hook is off.
    let trigger: String?

    init(environment: [String: String]) {
        trigger = environment[Self.variable].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A commit that kept answers landed: dies when the trigger file is there.
    func committed() {
        // `unlink` succeeds for one caller only: the file is consumed as it is seen.
        guard let trigger, unlink(trigger) == 0 else { return }
        kill(getpid(), SIGKILL)
    }
}
