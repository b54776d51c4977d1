// Seed 002, SwiftTea's "Advanced Patterns": "Retry Logic", as written.
// Only the imports are added. The text captures a non-Sendable `request` and `transform` in the
// `@Sendable` task closure, which Swift 6 refuses; this target builds in the Swift 5 language
// mode for that reason (Package.swift), and the text stays as it is.
import Foundation
import Grove
import GroveTea

struct RetryableRequest<T> {
let operation: () async throws -> T
let maxRetries: Int
let delay: TimeInterval
}

extension Effect {
static func retryable<T>(
_ request: RetryableRequest<T>,
transform: @escaping (T) -> Action
) -> Effect<Action> {
.task {
var lastError: Error?

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
