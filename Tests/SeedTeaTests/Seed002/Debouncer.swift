// Seed 002, SwiftTea's "Advanced Patterns": "Effect Debouncing", as written.
// Only the imports are added.
import Foundation

actor Debouncer {
private var task: Task<Void, Never>?

func debounce(for duration: TimeInterval, operation: @escaping () async -> Void) {
task?.cancel()
task = Task {
try? await Task.sleep(nanoseconds: UInt64(duration * 1_000_000_000))
if !Task.isCancelled {
await operation()
}
}
}
}
