/**
 * What a forward pass needs to know about a request: its per-pass info, sampling settings and
 * what resources published for it. Immutable values; they travel inside wire bodies.
 */
package io.mstar.request;
