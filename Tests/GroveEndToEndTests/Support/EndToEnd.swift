import Testing

/// The parent of every end-to-end suite. Serialized: each test launches a whole topology (a
/// coordinator and several worker processes), and on a small machine two at once would compete
/// for the CPU and turn heartbeat deadlines into flaky failures. The nested suites live in their
/// own files as `extension EndToEnd`.
@Suite(.serialized, .timeLimit(.minutes(5)))
enum EndToEnd {}
