package io.mstar.conductor.admin;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The admin API's bearer token ({@code mstar.conductor.admin.*}). There is no built-in token: with neither set,
 * every admin call is refused (503 {@code admin_disabled}) and start-up logs why.
 *
 * @param token     the token itself; set it through the environment ({@code MSTAR_CONDUCTOR_ADMIN_TOKEN}), never in
 *                  a committed file
 * @param tokenFile a file holding the token (a mounted Kubernetes Secret); read once at start-up, surrounding
 *                  whitespace trimmed. Wins over {@code token} when both are set.
 */
@ConfigurationProperties("mstar.conductor.admin")
public record AdminProperties(@DefaultValue("") String token, @DefaultValue("") String tokenFile) {
}
