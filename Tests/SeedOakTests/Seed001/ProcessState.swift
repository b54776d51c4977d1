// Seed 001, Oak's "Understanding Finite State Machines": "Model Terminal States Explicitly", as written.
// Only the imports are added; the types the seed leaves to the reader are in Support/.
//
// `completed(result: Result)` names a `Result` the seed leaves to the reader; at the top level the
// name is the standard library's generic `Result`, which needs arguments. The enum sits in a
// namespace that declares the reader's `Result`, its text otherwise unchanged.
import Grove

enum ProcessExample {
    /// What a finished process produced: the seed's `Result`.
    struct Result: Sendable, Equatable {
        var summary: String
    }

    enum ProcessState: Terminable {
        case initializing
        case processing(progress: Double)
        case completed(result: Result)
        case cancelled
        case failed(Error)
    
        var isTerminal: Bool {
            switch self {
            case .completed, .cancelled, .failed:
                return true
            case .initializing, .processing:
                return false
            }
        }
    }
}
