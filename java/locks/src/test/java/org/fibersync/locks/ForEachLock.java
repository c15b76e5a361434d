package org.fibersync.locks;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A test run once per lock of {@link LockFactories#all()}, named after the
 * lock; the method takes a {@code Supplier<Lock>}.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@ParameterizedTest(name = "{0}")
@MethodSource("org.fibersync.locks.LockFactories#all")
@interface ForEachLock {
}
