import CMosquitto
import Glibc
import Logging
import ParleyCore
import ParleyRuntime
import Synchronization

extension MQTTClient {
    /// Publishes a message. With QoS 1 it returns once the broker acknowledged it (PUBACK).
    ///
    /// - Parameters:
    ///   - messageExpiry: MQTT 5 message expiry: how long the broker keeps it for an
    ///     offline subscriber.
    ///   - requireSubscriber: a PUBACK saying no subscriber matched (0x10, a success code in
    ///     MQTT) throws ``MQTTError/noSubscribers``: for input someone must take, such as
    ///     `chat-in` while no ingest runs.
    public func publish(
        topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = false, messageExpiry: Duration? = nil,
        requireSubscriber: Bool = false
    ) async throws {
        let mid = try send(
            topic: topic, payload: payload, qos: qos, retain: retain, messageExpiry: messageExpiry, wake: false)
        // Marked before the network thread may send it: its PUBACK cannot come first.
        if requireSubscriber && qos > 0 { state.withLock { _ = $0.needsSubscriber.insert(mid) } }
        network.wake()
        if qos > 0 {
            try await acknowledgements(of: [mid])
        } else {
            state.withLock { $0.ignore(mid) }
        }
    }

    /// Hands a message to the broker without waiting for its acknowledgement (libmosquitto
    /// still completes QoS 1): for senders whose proof of delivery is elsewhere, such as a
    /// load generator that watches the recipients.
    public func publishWithoutWaiting(topic: String, payload: [UInt8], qos: Int = 1) throws {
        let mid = try send(topic: topic, payload: payload, qos: qos, messageExpiry: nil)
        state.withLock { $0.ignore(mid) }
    }

    /// Publishes messages at QoS 1 in this order (MQTT keeps one connection's order) and
    /// waits for all their acknowledgements together rather than one round trip each.
    public func publish(batch: [(topic: String, payload: [UInt8])], messageExpiry: Duration? = nil) async throws {
        var mids: [Int32] = []
        mids.reserveCapacity(batch.count)
        do {
            for message in batch {
                mids.append(
                    try send(
                        topic: message.topic, payload: message.payload, qos: 1, messageExpiry: messageExpiry,
                        wake: false))
            }
        } catch {
            // What was queued still goes out; nobody waits for its acknowledgements.
            network.wake()
            state.withLock { state in for mid in mids { state.ignore(mid) } }
            throw error
        }
        // One wake-up of the network thread for the whole batch.
        network.wake()
        try await acknowledgements(of: mids)
    }

    /// Hands a message to libmosquitto's queue; returns its message id.
    /// - Parameter wake: wake the network thread to send it now (a batch wakes it once).
    private func send(
        topic: String, payload: [UInt8], qos: Int, retain: Bool = false, messageExpiry: Duration?, wake: Bool = true
    ) throws -> Int32 {
        // libmosquitto queues a publish whenever its socket is open, also while its CONNECT
        // waits for an answer (a refused login included); without a session it must fail now.
        let (connected, shutDown) = state.withLock { ($0.connected, $0.shutDown) }
        guard !shutDown else { throw MQTTError.closed }
        guard connected else { throw MQTTError.notConnected }
        var properties: OpaquePointer? = nil
        defer { mosquitto_property_free_all(&properties) }
        if let messageExpiry {
            try MQTTError.check(
                mosquitto_property_add_int32(
                    &properties, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue),
                    UInt32(messageExpiry.components.seconds)))
        }
        var mid: Int32 = 0
        let rc = payload.withUnsafeBytes { bytes in
            mosquitto_publish_v5(
                handle, &mid, topic, Int32(bytes.count), bytes.baseAddress, Int32(qos), retain, properties)
        }
        try MQTTError.check(rc)
        network.queued()
        if wake { network.wake() }
        return mid
    }

    public func publish(topic: String, string: String, qos: Int = 1, retain: Bool = false) async throws {
        try await publish(topic: topic, payload: Array(string.utf8), qos: qos, retain: retain)
    }

    /// Subscribes to a filter (shared subscriptions `$share/group/filter` included) and keeps
    /// it across reconnects. When connected, returns after the broker's SUBACK; otherwise
    /// the subscription is made as soon as the connection is up.
    public func subscribe(_ filter: String, qos: Int = 1) async throws {
        let connected = state.withLock { state in
            state.subscriptions[filter] = Int32(qos)
            return state.connected
        }
        guard connected else { return }
        var mid: Int32 = 0
        let rc = mosquitto_subscribe(handle, &mid, filter, Int32(qos))
        if rc == MOSQ_ERR_NO_CONN.rawValue { return }  // made on reconnect
        try MQTTError.check(rc)
        network.wake()
        try await acknowledgements(of: [mid])
    }

    /// Hands messages whose topic starts with `prefix` to `handler` on the network thread, in
    /// arrival order, instead of to ``messages``: a consumer that only queues them is spared a
    /// hop through a task per message. `handler` must return at once and never block.
    public func route(topicsWithPrefix prefix: String, to handler: @escaping @Sendable (MQTTMessage) -> Void) {
        state.withLock { $0.routes.append((prefix, handler)) }
    }

    /// Sends messages of `prefix` to ``messages`` again.
    public func removeRoute(topicsWithPrefix prefix: String) {
        state.withLock { $0.routes.removeAll { $0.prefix == prefix } }
    }

    /// Drops a filter; it is not re-subscribed on reconnect.
    public func unsubscribe(_ filter: String) throws {
        state.withLock { _ = $0.subscriptions.removeValue(forKey: filter) }
        let rc = mosquitto_unsubscribe(handle, nil, filter)
        if rc != MOSQ_ERR_NO_CONN.rawValue { try MQTTError.check(rc) }
        network.wake()
    }

    /// Waits for the acknowledgements of `mids`, bounded by the configured timeout; fails
    /// with the first refusal.
    private func acknowledgements(of mids: [Int32]) async throws {
        guard !mids.isEmpty else { return }
        let waiter = AcknowledgementWaiter(mids: mids)
        // A deadline, not a sleeping task per call: see ParleyCore's `Deadlines`.
        let timer = Deadlines.shared.after(configuration.acknowledgementTimeout) { [weak self] in
            self?.end(waiter, with: .timeout)
        }
        defer { Deadlines.shared.cancel(timer) }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { state -> MQTTError?? in
                if let ended = Self.register(waiter, in: &state) { return .some(ended) }
                guard waiter.remaining > 0 else {
                    waiter.finished = true
                    return .some(nil)
                }
                waiter.continuation = continuation
                return .none
            }
            switch outcome {
            case .none: break
            case .some(.none): continuation.resume()
            case .some(.some(let error)): continuation.resume(throwing: error)
            }
        }
    }

    /// Registers the waiter's ids, taking the acknowledgements that came early; returns the
    /// error that ends its wait at once (a refusal that came early, a timeout, a shutdown).
    private static func register(_ waiter: AcknowledgementWaiter, in state: inout MQTTClientState) -> MQTTError? {
        if let outcome = waiter.outcome {
            for mid in waiter.mids { state.ignore(mid) }
            return outcome
        }
        if state.shutDown {
            for mid in waiter.mids { state.ignore(mid) }
            return .closed
        }
        for (index, mid) in waiter.mids.enumerated() {
            if let early = state.earlyAcknowledgements.removeValue(forKey: mid),
                ContinuousClock.now - early.at < .seconds(5)
            {
                guard let error = early.error else { continue }
                _ = state.finish(waiter)
                for later in waiter.mids[(index + 1)...] { state.ignore(later) }
                return error
            }
            state.pending[mid] = waiter
            waiter.remaining += 1
        }
        return nil
    }

    /// Ends a wait before all its acknowledgements came (its deadline passed).
    private func end(_ waiter: AcknowledgementWaiter, with error: MQTTError) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard !waiter.finished else { return nil }
            // Not waiting yet: it finds this when it registers.
            if waiter.continuation == nil { waiter.outcome = error }
            return state.finish(waiter)
        }
        continuation?.resume(throwing: error)
    }

    // MARK: Called on libmosquitto's network thread

    /// - Parameter error: the broker's refusal (an MQTT 5 reason code of 0x80 or more).
    func didAcknowledge(_ mid: Int32, error: MQTTError?) {
        let resume = state.withLock { state -> (CheckedContinuation<Void, any Error>, MQTTError?)? in
            if state.ignored.remove(mid) != nil { return nil }
            guard let waiter = state.pending.removeValue(forKey: mid) else {
                state.earlyAcknowledgements[mid] = (ContinuousClock.now, error)
                return nil
            }
            if let error { return state.finish(waiter).map { ($0, error) } }
            waiter.remaining -= 1
            guard waiter.remaining == 0 else { return nil }
            return state.finish(waiter).map { ($0, nil) }
        }
        guard let (continuation, error) = resume else { return }
        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
    }

    func didConnect(_ code: Int32) {
        guard code == 0 else {
            state.withLock { $0.refusal = code }
            logger.warning("MQTT broker refused the connection", metadata: ["reason": "\(code)"])
            return
        }
        let subscriptions = state.withLock { state in
            state.connected = true
            state.refusal = nil
            // Acknowledgements of the last connection will not come any more.
            state.earlyAcknowledgements.removeAll()
            state.ignored.removeAll()
            return state.subscriptions
        }
        logger.info("MQTT connected", metadata: ["broker": "\(configuration.host):\(configuration.port)"])
        for (filter, qos) in subscriptions {
            var mid: Int32 = 0
            let rc = mosquitto_subscribe(handle, &mid, filter, qos)
            if rc == MOSQ_ERR_SUCCESS.rawValue {
                state.withLock { $0.ignore(mid) }
            } else {
                logger.error("MQTT re-subscribe failed", metadata: ["filter": "\(filter)", "code": "\(rc)"])
            }
        }
    }

    func didDisconnect(_ code: Int32) {
        let handlers = state.withLock { state in
            state.connected = false
            return state.connectionLost
        }
        for handler in handlers { handler() }
        if code != 0 { logger.warning("MQTT connection lost; reconnecting", metadata: ["code": "\(code)"]) }
    }

    func didReceive(_ message: MQTTMessage) {
        let route = state.withLock { state in state.routes.first { message.topic.hasPrefix($0.prefix) }?.handler }
        if let route { route(message) } else { messages.append(message) }
    }
}

extension MQTTClient {
    /// Registers the C callbacks; each recovers the client from libmosquitto's user data.
    func installCallbacks() {
        mosquitto_connect_callback_set(handle) { _, userData, code in
            MQTTClient.from(userData).didConnect(code)
        }
        mosquitto_disconnect_callback_set(handle) { _, userData, code in
            MQTTClient.from(userData).didDisconnect(code)
        }
        // The v5 callbacks carry the broker's reason codes: a refused publish or subscription
        // (not authorised, quota exceeded) must fail its caller, not look acknowledged.
        mosquitto_publish_v5_callback_set(handle) { _, userData, mid, reasonCode, _ in
            let client = MQTTClient.from(userData)
            let needsSubscriber = client.state.withLock { $0.needsSubscriber.remove(mid) != nil }
            let error =
                reasonCode >= 0x80
                ? MQTTError.refused(reasonCode)
                : (reasonCode == 0x10 && needsSubscriber ? MQTTError.noSubscribers : nil)
            client.didAcknowledge(mid, error: error)
        }
        mosquitto_subscribe_v5_callback_set(handle) { _, userData, mid, count, granted, _ in
            let codes = (0..<Int(count)).map { granted?[$0] ?? 0x80 }
            let error = codes.first { $0 >= 0x80 }.map { MQTTError.refused($0) }
            MQTTClient.from(userData).didAcknowledge(mid, error: error)
        }
        mosquitto_message_v5_callback_set(handle) { _, userData, raw, properties in
            guard let raw else { return }
            let message = raw.pointee
            let client = MQTTClient.from(userData)
            if message.qos > 0 { client.network.queued() }  // its PUBACK
            let payload =
                message.payloadlen > 0
                ? Array(UnsafeRawBufferPointer(start: message.payload, count: Int(message.payloadlen))) : []
            client.didReceive(
                MQTTMessage(
                    topic: String(cString: message.topic), payload: payload, qos: Int(message.qos),
                    retain: message.retain, userProperties: MQTTClient.userProperties(properties)))
        }
    }

    /// The user properties of a property list, copied out (libmosquitto frees the list).
    static func userProperties(_ list: OpaquePointer?) -> [String: String] {
        var properties: [String: String] = [:]
        var name: UnsafeMutablePointer<CChar>? = nil
        var value: UnsafeMutablePointer<CChar>? = nil
        var cursor = mosquitto_property_read_string_pair(
            list, Int32(MQTT_PROP_USER_PROPERTY.rawValue), &name, &value, false)
        while cursor != nil {
            if let name, let value { properties[String(cString: name)] = String(cString: value) }
            free(name)
            free(value)
            (name, value) = (nil, nil)
            cursor = mosquitto_property_read_string_pair(
                cursor, Int32(MQTT_PROP_USER_PROPERTY.rawValue), &name, &value, true)
        }
        return properties
    }

    static func from(_ userData: UnsafeMutableRawPointer?) -> MQTTClient {
        Unmanaged<MQTTClient>.fromOpaque(userData!).takeUnretainedValue()
    }
}
