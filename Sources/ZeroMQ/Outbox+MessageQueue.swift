/// One peer's messages waiting in an ``Outbox``, oldest first: their frames back to back in one
/// buffer (each message behind its frame count, one byte; each frame behind its length, four
/// bytes), so that queueing a message copies its bytes and allocates nothing most of the time.
struct MessageQueue {
    private var buffer: [UInt8] = []
    /// Where the oldest message starts in `buffer`.
    private var head = 0
    /// Messages waiting.
    private(set) var messages = 0
    /// Their frames' bytes.
    private(set) var bytes = 0
    /// When the queue is tried again; `nil`: at the next retry.
    var retryAt: ContinuousClock.Instant?
    /// The pause after the last attempt in which nothing left; zero while the queue moves.
    var pause: Duration = .zero

    /// The most frames a queued message may have.
    static let maximumFrames = Int(UInt8.max)
    /// A buffer this large is let go when its queue empties, and compacted once its first half
    /// has left.
    static let keptCapacity = 64 << 10

    var isEmpty: Bool { messages == 0 }
    /// What the buffer can hold before it is copied to a larger one.
    var capacity: Int { buffer.capacity }

    /// Appends a message of `frameCount` frames, `size` bytes in all, which `writeFrames` hands
    /// to the `write` it is given one by one, in order.
    mutating func append(frameCount: Int, size: Int, _ writeFrames: (_ write: (UnsafeRawBufferPointer) -> Void) -> Void) {
        precondition(frameCount <= Self.maximumFrames, "a message of \(frameCount) frames cannot wait in an outbox")
        var buffer = Swift.exchange(&self.buffer, with: [])
        let needed = buffer.count + 1 + 4 * frameCount + size
        // Doubled, not just enough: `reserveCapacity` gives exactly what is asked, so asking for
        // one message more at each append copied the whole queue each time (a silent client's
        // 16 MiB of 100 KiB replies took the coordinator seconds, and its heartbeats with it).
        if needed > buffer.capacity { buffer.reserveCapacity(max(needed, 2 * buffer.capacity)) }
        buffer.append(UInt8(frameCount))
        writeFrames { frame in
            withUnsafeBytes(of: UInt32(frame.count).littleEndian) { buffer.append(contentsOf: $0) }
            buffer.append(contentsOf: frame)
        }
        self.buffer = buffer
        messages += 1
        bytes += size
    }

    /// Offers the messages to `attempt` from the oldest until one would block; each is lent as
    /// its frames, valid during the call. What left (sent, or failed and removed) is counted;
    /// the failed ones are returned with their frames.
    mutating func drain(_ attempt: (UnsafeBufferPointer<UnsafeRawBufferPointer>) -> SendAttempt)
        -> (left: (messages: Int, bytes: Int), failed: [([[UInt8]], ZMQError)]) {
        var left = (messages: 0, bytes: 0)
        var failed: [([[UInt8]], ZMQError)] = []
        var position = head
        let waiting = messages
        buffer.withUnsafeBytes { raw in
            withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: Self.maximumFrames) { frames in
                while left.messages < waiting {
                    let (next, frameCount, size) = Self.frames(at: position, in: raw, into: frames)
                    let message = UnsafeBufferPointer(rebasing: frames[0 ..< frameCount])
                    switch attempt(message) {
                    case .sent:
                        break
                    case .wouldBlock:
                        return
                    case .failed(let error):
                        failed.append((message.map { Array($0) }, error))
                    }
                    position = next
                    left.messages += 1
                    left.bytes += size
                }
            }
        }
        head = position
        messages -= left.messages
        bytes -= left.bytes
        if messages == 0 {
            if buffer.capacity > Self.keptCapacity { buffer = [] } else { buffer.removeAll(keepingCapacity: true) }
            head = 0
        } else if head > Self.keptCapacity, head > buffer.count / 2 {
            buffer.removeSubrange(0 ..< head)
            head = 0
        }
        return (left, failed)
    }

    /// Every message waiting, oldest first, as arrays (a peer's queue dropped).
    func allMessages() -> [[[UInt8]]] {
        var all: [[[UInt8]]] = []
        var position = head
        buffer.withUnsafeBytes { raw in
            withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: Self.maximumFrames) { frames in
                for _ in 0 ..< messages {
                    let (next, frameCount, _) = Self.frames(at: position, in: raw, into: frames)
                    all.append(frames[0 ..< frameCount].map { Array($0) })
                    position = next
                }
            }
        }
        return all
    }

    /// The frames of the message at `position`, written to `frames`: where the next message
    /// starts, how many frames, and their bytes.
    private static func frames(at position: Int, in raw: UnsafeRawBufferPointer,
                               into frames: UnsafeMutableBufferPointer<UnsafeRawBufferPointer>) -> (next: Int, count: Int, size: Int) {
        let count = Int(raw[position])
        var offset = position + 1
        var size = 0
        for index in 0 ..< count {
            let length = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            frames[index] = UnsafeRawBufferPointer(rebasing: raw[(offset + 4) ..< (offset + 4 + length)])
            offset += 4 + length
            size += length
        }
        return (offset, count, size)
    }
}
