internal import CZeroMQ

/// Sending and receiving from memory the caller lends: for hot paths that answer or forward one
/// message at a time, where making arrays of every frame cost more than the rest of the work.
extension Socket {
    /// ``send(_:dontWait:)`` for a message of three frames in borrowed memory (libzmq copies
    /// what it queues), e.g. a DEALER's header, address and payload.
    /// - Returns: `false` when the message could not be queued (`EAGAIN`); `true` when queued.
    /// - Throws: `ZMQError` for other failures.
    package func send(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer, _ third: UnsafeRawBufferPointer,
                     dontWait: Bool) throws(ZMQError) -> Bool {
        guard try sendFrame(first, first: true, last: false, dontWait: dontWait, peer: nil) else { return false }
        _ = try sendFrame(second, first: false, last: false, dontWait: dontWait, peer: nil)
        _ = try sendFrame(third, first: false, last: true, dontWait: dontWait, peer: nil)
        return true
    }

    /// ``send(_:dontWait:)`` for a message of four frames, the last three in borrowed memory:
    /// on a ROUTER, the peer's routing id and then header, address and payload.
    /// - Returns: `false` when the message could not be queued (`EAGAIN`); `true` when queued.
    /// - Throws: `ZMQError` for other failures, e.g. `EHOSTUNREACH` for an unknown peer under
    ///   `ROUTER_MANDATORY`.
    package func send(_ peer: [UInt8], _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer,
                     _ third: UnsafeRawBufferPointer, dontWait: Bool) throws(ZMQError) -> Bool {
        let sent = peer.withUnsafeBytes { raw in
            Result { () throws(ZMQError) -> Bool in try sendFrame(raw, first: true, last: false, dontWait: dontWait, peer: peer) }
        }
        guard try sent.get() else { return false }
        try sendRest(first, last: false, dontWait: dontWait, peer: peer)
        try sendRest(second, last: false, dontWait: dontWait, peer: peer)
        try sendRest(third, last: true, dontWait: dontWait, peer: peer)
        return true
    }

    /// ``send(_:dontWait:)`` for a message whose frames are all in borrowed memory (an outbox's
    /// queue; on a ROUTER, frame 0 is the peer's routing id).
    /// - Returns: `false` when the message could not be queued (`EAGAIN`); `true` when queued.
    /// - Throws: `ZMQError` for other failures, e.g. `EHOSTUNREACH` for an unknown peer under
    ///   `ROUTER_MANDATORY`.
    package func send(borrowed frames: UnsafeBufferPointer<UnsafeRawBufferPointer>, dontWait: Bool) throws(ZMQError) -> Bool {
        guard let last = frames.indices.last else {
            throw ZMQError(errno: EINVAL, operation: "send an empty message (it needs at least one frame)")
        }
        // No peer for the error's text: making one would cost an array per message sent.
        for index in frames.indices {
            if index > 0, let held = counted(frames[index].count) {
                let peer = Array(frames[0])
                try sendCounted(frames[index], last: index == last, dontWait: dontWait, peer: peer, held: held,
                                handle: try open(sendOperation([peer])), operation: sendOperation([peer]))
                continue
            }
            let queued = try sendFrame(frames[index], first: index == 0, last: index == last, dontWait: dontWait, peer: nil)
            if index == 0, !queued { return false }
        }
        return true
    }

    /// A frame after a ROUTER message's first (the peer's routing id): counted in ``heldBytes``
    /// when large.
    private func sendRest(_ frame: UnsafeRawBufferPointer, last: Bool, dontWait: Bool, peer: [UInt8]) throws(ZMQError) {
        if let held = counted(frame.count) {
            try sendCounted(frame, last: last, dontWait: dontWait, peer: peer, held: held,
                            handle: try open(sendOperation([peer])), operation: sendOperation([peer]))
        } else {
            _ = try sendFrame(frame, first: false, last: last, dontWait: dontWait, peer: peer)
        }
    }

    /// One frame of a multipart message: `false` only when the first frame finds no room.
    private func sendFrame(_ frame: UnsafeRawBufferPointer, first: Bool, last: Bool, dontWait: Bool,
                           peer: [UInt8]?) throws(ZMQError) -> Bool {
        let handle = try open(sendOperation(peer.map { [$0] } ?? []))
        var flags = (dontWait ? ZMQ_DONTWAIT : 0) | (last ? 0 : ZMQ_SNDMORE)
        while true {
            if zmq_send(handle, frame.baseAddress, frame.count, flags) >= 0 { return true }
            let code = zmq_errno()
            if code == EINTR { continue }
            if first, code == EAGAIN { return false }
            // Past the first frame libzmq does not refuse for lack of room; should it ever,
            // finish the message blocking rather than leave half of it queued.
            if !first, code == EAGAIN, flags & ZMQ_DONTWAIT != 0 {
                flags &= ~ZMQ_DONTWAIT
                continue
            }
            throw ZMQError(errno: code, operation: sendOperation(peer.map { [$0] } ?? []))
        }
    }

    /// Receives one whole message and lends its frames to `body`, without copying them into
    /// arrays. The frames are valid only during the call.
    /// - Parameters:
    ///   - dontWait: Return `nil` at once when nothing is waiting instead of blocking.
    ///   - body: Gets the frames (up to ``borrowedFrameLimit``; a message with more has its
    ///     extra frames dropped and is reported with `frameCount` above the buffer's count).
    /// - Returns: What `body` returned, or `nil` on `EAGAIN`.
    /// - Throws: `ZMQError` for other failures, e.g. `ETERM` after the context ended.
    package func receive<Result>(
        dontWait: Bool, _ body: (_ frames: UnsafeBufferPointer<UnsafeRawBufferPointer>, _ frameCount: Int) -> Result
    ) throws(ZMQError) -> Result? {
        var result: Result?
        guard try receiveBorrowed(dontWait: dontWait, { frames, count in result = body(frames, count) }) else { return nil }
        return result
    }

    /// ``receive(dontWait:_:)`` without a result, for hot paths: `false` on `EAGAIN`, `true`
    /// once `body` ran. Not generic, as the generic one is not specialized across modules:
    /// asking for `Result?`'s metadata on every message was 5 % of fsm-load's time.
    package func receiveBorrowed(
        dontWait: Bool, _ body: (_ frames: UnsafeBufferPointer<UnsafeRawBufferPointer>, _ frameCount: Int) -> Void
    ) throws(ZMQError) -> Bool {
        let handle = try open("receive on \(type)")
        let limit = Self.borrowedFrameLimit
        // One message per frame kept, and one more that frames past the limit go through.
        return try withUnsafeTemporaryAllocation(of: zmq_msg_t.self, capacity: limit + 1) { (messages) throws(ZMQError) -> Bool in
            try withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: limit) { (frames) throws(ZMQError) -> Bool in
                let slots = messages.baseAddress!
                for index in 0 ... limit { zmq_msg_init(slots + index) }
                defer { for index in 0 ... limit { zmq_msg_close(slots + index) } }
                var count = 0
                var flags = dontWait ? ZMQ_DONTWAIT : 0
                while true {
                    let slot = slots + min(count, limit)
                    if zmq_msg_recv(slot, handle, flags) < 0 {
                        let code = zmq_errno()
                        if code == EINTR { continue }
                        if code == EAGAIN && count == 0 { return false }
                        // The parts of a message arrive together; wait for the rest should that ever differ.
                        if code == EAGAIN && flags != 0 {
                            flags = 0
                            continue
                        }
                        throw ZMQError(errno: code, operation: "receive on \(type)")
                    }
                    if count < limit {
                        frames[count] = UnsafeRawBufferPointer(start: zmq_msg_data(slot), count: zmq_msg_size(slot))
                    }
                    count += 1
                    if zmq_msg_more(slot) == 0 { break }
                }
                body(UnsafeBufferPointer(rebasing: frames[0 ..< min(count, limit)]), count)
                return true
            }
        }
    }

    /// The most frames ``receive(dontWait:_:)`` lends; Grove's messages have three (four on a ROUTER).
    package static let borrowedFrameLimit = 8
}
