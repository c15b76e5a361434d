package org.fibersync.bench;

/** A config the harness refuses; the message is one line meant for the user. */
public final class ConfigException extends Exception {
    private static final long serialVersionUID = 1L;

    public ConfigException(String message) {
        super(message);
    }
}
