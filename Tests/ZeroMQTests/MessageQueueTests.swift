import Testing
@testable import ZeroMQ

@Suite(.timeLimit(.minutes(2)))
struct MessageQueueTests {
    /// A queue that grows by one message at a time is copied a logarithmic number of times, not
    /// once per message: a silent client's 160 replies of 100 KiB cost the coordinator seconds
    /// when each append copied the whole queue.
    @Test func appendingGrowsTheBufferGeometrically() {
        var queue = MessageQueue()
        let frame = [UInt8](repeating: 1, count: 100)
        var capacities: Set<Int> = []
        for _ in 0 ..< 10_000 {
            queue.append(frameCount: 1, size: frame.count) { write in frame.withUnsafeBytes(write) }
            capacities.insert(queue.capacity)
        }
        #expect(queue.messages == 10_000)
        #expect(capacities.count < 40, "the buffer was reallocated \(capacities.count) times for 10,000 appends")
    }

    @Test func whatWasAppendedDrainsInOrder() {
        var queue = MessageQueue()
        for index in 0 ..< 1000 {
            let frame = [UInt8](repeating: UInt8(index % 256), count: index % 7 + 1)
            queue.append(frameCount: 1, size: frame.count) { write in frame.withUnsafeBytes(write) }
        }
        var seen: [[UInt8]] = []
        _ = queue.drain { frames in
            seen.append(Array(frames[0]))
            return .sent
        }
        #expect(seen.count == 1000)
        #expect(seen.enumerated().allSatisfy { index, frame in frame == [UInt8](repeating: UInt8(index % 256), count: index % 7 + 1) })
        #expect(queue.isEmpty)
    }
}
