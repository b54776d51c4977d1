import Foundation
import Grove
import GroveTea

// Seed 002, SwiftTea's "Advanced Patterns": "Retry Logic", as written (between the `// Seed text`
// lines), used by `RetryableFetch`. Three changes, each marked `// Swift 6`: this package builds in
// the Swift 6 language mode, which refuses the seed's capture of a non-Sendable `operation` and
// `transform` in the task's `@Sendable` closure (the seed test target, in Swift 5 mode, keeps
// them; docs/DIALECTS.md), so both are `@Sendable`; and `Error` is `any Error`
// (`ExistentialAny`). In a file of its own: `GroveTea`'s module-level `Effect`, which the text
// extends, would hide the `Effect` that a `TeaProgram` writes unqualified.

// Seed text
struct RetryableRequest<T> {
let operation: @Sendable () async throws -> T // Swift 6: `@Sendable`
let maxRetries: Int
let delay: TimeInterval
}

extension Effect {
static func retryable<T>(
_ request: RetryableRequest<T>,
transform: @escaping @Sendable (T) -> Action // Swift 6: `@Sendable`
) -> Effect<Action> {
.task {
var lastError: (any Error)? // Swift 6: `any Error`

for attempt in 0...request.maxRetries {
do {
let result = try await request.operation()
return transform(result)
} catch {
lastError = error
if attempt < request.maxRetries {
try await Task.sleep(nanoseconds: UInt64(request.delay * 1_000_000_000))
}
}
}

throw lastError!
}
}
}
// End of seed text
