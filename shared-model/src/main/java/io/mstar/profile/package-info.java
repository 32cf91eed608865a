/** Per-request timing and transfer totals a worker reports to the conductor. Times are seconds. */
package io.mstar.profile;
