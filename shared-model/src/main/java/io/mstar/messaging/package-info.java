/**
 * The Kafka control plane shared by the conductor and the workers (docs/architecture.md#control-plane), on plain
 * kafka-clients and Micrometer, no Spring.
 *
 * <ul>
 *   <li>Names: {@link io.mstar.messaging.EntityId} ({@code conductor}, {@code worker-<n>}),
 *       {@link io.mstar.messaging.Topics} ({@code <prefix>.conductor}, {@code <prefix>.worker.worker-<n>},
 *       {@code <prefix>.dlq}; consumer groups {@code <prefix>.conductor}, {@code <prefix>.worker-<n>}).</li>
 *   <li>Every record carries {@link io.mstar.messaging.ControlHeaders}: {@code mstar-sender},
 *       {@code mstar-incarnation}, {@code mstar-sent-at} (epoch nanos), {@code mstar-config} (config digest);
 *       a dead-lettered one adds {@code mstar-dlq-reason} and {@code mstar-dlq-receiver}.</li>
 *   <li>Keys: {@link io.mstar.messaging.RecordKeys}. Sending: {@link io.mstar.messaging.ControlPlaneSender}.
 *       Receiving: {@link io.mstar.messaging.ControlMessageDeserializer} (one per topic kind), which
 *       refuses with a
 *       {@link io.mstar.messaging.ControlRecordRejectedException} carrying a stable
 *       {@link io.mstar.messaging.DeadLetterReason}.</li>
 *   <li>Meters: {@link io.mstar.messaging.ControlPlaneMeters}, one declaration per role.</li>
 * </ul>
 */
package io.mstar.messaging;
